/**
 * OpenTelemetry for both functions, set by stack parameters and passed through as the standard
 * OTEL_* variables (src/telemetry/, src/lambda/invocation.ts). Off while OtlpEndpoint is empty;
 * the functions write their CloudWatch EMF metrics either way.
 *
 * What the exporter needs:
 * - Network: OTLP/HTTP to the collector. Without Redis the functions are outside any VPC and
 *   reach the internet; with `-c redis=true` they sit in private subnets whose one NAT gateway
 *   gives them egress (redis.ts). A collector inside the VPC, or one run as a Lambda extension
 *   layer on `http://localhost:4318`, needs nothing more.
 * - A collector's key: OtlpHeadersArn names a Secrets Manager secret holding the
 *   `key=value` headers (OTEL_EXPORTER_OTLP_HEADERS). The functions get its ARN, never its value,
 *   read it at cold start (src/lambda/secrets.ts), and may read that one secret only when the
 *   parameter is set (a policy of its own, under a condition).
 */
import { CfnCondition, CfnParameter, Fn } from 'aws-cdk-lib';
import { Policy, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { CfnPolicy, IRole } from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';

export interface TelemetryParameters {
  endpoint: CfnParameter;
  protocol: CfnParameter;
  sampler: CfnParameter;
  samplerArg: CfnParameter;
  headersSecretArn: CfnParameter;
  hasHeadersSecret: CfnCondition;
}

export function defineTelemetryParameters(scope: Construct): TelemetryParameters {
  const headersSecretArn = new CfnParameter(scope, 'OtlpHeadersArn', {
    type: 'String',
    default: '',
    allowedPattern: '(arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:[A-Za-z0-9/_+=.@-]+)?',
    description: 'A Secrets Manager secret whose value is the OTLP headers (key=value,...), e.g. a collector API key',
  });
  return {
    endpoint: new CfnParameter(scope, 'OtlpEndpoint', {
      type: 'String',
      default: '',
      allowedPattern: '(https?://[^\\s]+)?',
      description:
        'OTLP/HTTP base URL of your collector (OTEL_EXPORTER_OTLP_ENDPOINT); empty: no traces nor OTLP metrics',
    }),
    protocol: new CfnParameter(scope, 'OtlpProtocol', {
      type: 'String',
      default: 'http/protobuf',
      allowedValues: ['http/protobuf', 'http/json'],
      description: 'OTEL_EXPORTER_OTLP_PROTOCOL',
    }),
    sampler: new CfnParameter(scope, 'TracesSampler', {
      type: 'String',
      default: 'parentbased_traceidratio',
      allowedValues: [
        'always_on',
        'always_off',
        'traceidratio',
        'parentbased_always_on',
        'parentbased_always_off',
        'parentbased_traceidratio',
      ],
      description: 'OTEL_TRACES_SAMPLER',
    }),
    samplerArg: new CfnParameter(scope, 'TracesSamplerRatio', {
      type: 'String',
      default: '0.01',
      allowedPattern: '(0(\\.[0-9]+)?|1(\\.0+)?)',
      description: 'OTEL_TRACES_SAMPLER_ARG: the share of traces recorded by the *traceidratio samplers, 0 to 1',
    }),
    headersSecretArn,
    hasHeadersSecret: new CfnCondition(scope, 'HasOtlpHeadersSecret', {
      expression: Fn.conditionNot(Fn.conditionEquals(headersSecretArn.valueAsString, '')),
    }),
  };
}

/** The OTEL_* variables of one function. */
export const telemetryEnvironment = (p: TelemetryParameters, serviceName: string): Record<string, string> => ({
  OTEL_SERVICE_NAME: serviceName,
  OTEL_EXPORTER_OTLP_ENDPOINT: p.endpoint.valueAsString,
  OTEL_EXPORTER_OTLP_PROTOCOL: p.protocol.valueAsString,
  OTEL_TRACES_SAMPLER: p.sampler.valueAsString,
  OTEL_TRACES_SAMPLER_ARG: p.samplerArg.valueAsString,
  OTEL_EXPORTER_OTLP_HEADERS_ARN: p.headersSecretArn.valueAsString,
});

/** GetSecretValue on the headers secret, for `roles`, only when OtlpHeadersArn is set. */
export function grantTelemetry(scope: Construct, p: TelemetryParameters, roles: IRole[]): void {
  const policy = new Policy(scope, 'OtlpHeadersSecretRead', {
    statements: [
      new PolicyStatement({
        actions: ['secretsmanager:GetSecretValue'],
        resources: [p.headersSecretArn.valueAsString],
      }),
    ],
    roles,
  });
  (policy.node.defaultChild as CfnPolicy).cfnOptions.condition = p.hasHeadersSecret;
}
