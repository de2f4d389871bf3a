/*
 * Starts DynamoDB Local with its HTTP listener bound to 127.0.0.1 only. DynamoDB Local has no
 * bind option: its Jetty connector listens on every interface, so anyone who can reach the
 * machine could read and write the table. This launcher builds the server exactly as
 * DynamoDB Local's own main() does (same command-line arguments), sets the host of every
 * connector to the loopback address before anything listens, then starts it.
 *
 * Run with DynamoDBLocal.jar on the class path, in source-file mode (java File.java, no javac
 * needed) or compiled. Exits with status 3 when the connector cannot be reached: better not to
 * start than to listen on every interface.
 */
import java.lang.reflect.Field;
import java.lang.reflect.Method;

public final class LoopbackDynamoDBLocal {
    private static final String HOST = "127.0.0.1";

    public static void main(String[] args) throws Exception {
        Class<?> runner = Class.forName("software.amazon.dynamodb.services.local.main.ServerRunner");
        Object proxy = runner.getMethod("createServerFromCommandLineArgs", String[].class).invoke(null, (Object) args);
        if (proxy == null) System.exit(2); // arguments refused; DynamoDB Local printed why
        Field serverField = proxy.getClass().getDeclaredField("server");
        serverField.setAccessible(true);
        Object jetty = serverField.get(proxy);
        Object[] connectors = (Object[]) jetty.getClass().getMethod("getConnectors").invoke(jetty);
        int bound = 0;
        for (Object connector : connectors) {
            Method setHost = connector.getClass().getMethod("setHost", String.class);
            setHost.invoke(connector, HOST);
            bound++;
        }
        if (bound == 0) {
            System.err.println("LoopbackDynamoDBLocal: no connector to bind to " + HOST);
            System.exit(3);
        }
        proxy.getClass().getMethod("start").invoke(proxy);
        System.out.println("LoopbackDynamoDBLocal: listening on " + HOST);
    }
}
