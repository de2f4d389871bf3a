/*
 * Starts DynamoDB Local with its HTTP listener bound to 127.0.0.1 only. DynamoDB Local has no
 * bind option: its Jetty connector listens on every interface, so anyone who can reach the
 * machine could read and write the table. This launcher builds the server exactly as
 * DynamoDB Local's own main() does (same command-line arguments), sets the host of every
 * connector to the loopback address before anything listens, then starts it.
 *
 * Run with DynamoDBLocal.jar on the class path, in source-file mode (java File.java, no javac
 * needed) or compiled. Exits with status 3 when the connector cannot be reached: better not to
 * start than to listen on every interface; 4 when the port is taken, 5 when the start fails
 * otherwise. Once listening it prints "listening on 127.0.0.1:<port>", the port it bound.
 */
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.BindException;

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
        try {
            proxy.getClass().getMethod("start").invoke(proxy);
        } catch (InvocationTargetException failed) {
            // Jetty's threads may outlive a failed start and keep the JVM running with nothing
            // listening: exit, and say why when the port is taken.
            if (bindFailure(failed)) {
                System.err.println("LoopbackDynamoDBLocal: port in use");
                System.exit(4);
            }
            System.err.println("LoopbackDynamoDBLocal: start failed: " + failed.getCause());
            System.exit(5);
        }
        // The port this process bound, read back from its own connector: the server waits for
        // this line, so a port answered by another process is never taken for this one.
        Object port = connectors[0].getClass().getMethod("getLocalPort").invoke(connectors[0]);
        System.out.println("LoopbackDynamoDBLocal: listening on " + HOST + ":" + port);
    }

    private static boolean bindFailure(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof BindException) return true;
        }
        return false;
    }
}
