/**
 * The GraphQL API: the Lambda function (src/lambda/graphql.ts) on a `live` alias, so that
 * provisioned concurrency can be set, behind an API Gateway HTTP API (payload v2) with stage
 * throttling and access logs.
 */
import { Aws, Duration, Fn, RemovalPolicy, Token, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { HttpApi, HttpMethod, HttpStage, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { Alias } from 'aws-cdk-lib/aws-lambda';
import type { CfnAlias, CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { createFunction } from './lambdaFunction.js';
import type { FunctionNetwork, StackFunction } from './lambdaFunction.js';
import type { StackParameters } from './parameters.js';

export interface GraphQLApi extends StackFunction {
  api: HttpApi;
  stage: HttpStage;
  alias: Alias;
}

export interface GraphQLApiOptions {
  params: StackParameters;
  environment: Record<string, string>;
  network?: FunctionNetwork | undefined;
}

export function createGraphQLApi(scope: Construct, { params, environment, network }: GraphQLApiOptions): GraphQLApi {
  const { fn, role } = createFunction(scope, 'GraphQLFunction', {
    name: 'graphql',
    description: 'tablegraph GraphQL API',
    memorySize: 1024,
    // API Gateway gives up on an integration after 30 s.
    timeout: Duration.seconds(29),
    environment,
    network,
  });
  (fn.node.defaultChild as CfnFunction).reservedConcurrentExecutions = Token.asNumber(
    Fn.conditionIf(
      params.hasApiReservedConcurrency.logicalId,
      params.apiReservedConcurrency.valueAsNumber,
      Aws.NO_VALUE,
    ),
  );
  const alias = new Alias(scope, 'GraphQLLive', { aliasName: 'live', version: fn.currentVersion });
  (alias.node.defaultChild as CfnAlias).provisionedConcurrencyConfig = Fn.conditionIf(
    params.hasApiProvisionedConcurrency.logicalId,
    { ProvisionedConcurrentExecutions: params.apiProvisionedConcurrency.valueAsNumber },
    Aws.NO_VALUE,
  );

  const api = new HttpApi(scope, 'HttpApi', {
    apiName: 'tablegraph',
    description: 'tablegraph GraphQL over HTTP: POST and GET /graphql',
    createDefaultStage: false,
  });
  const integration = new HttpLambdaIntegration('GraphQLIntegration', alias);
  for (const route of api.addRoutes({ path: '/graphql', methods: [HttpMethod.POST, HttpMethod.GET], integration })) {
    Validations.of(route).acknowledge({
      id: 'AwsSolutions::AwsSolutions-APIG4',
      reason:
        "Authorization is the GraphQL layer's: every request's bearer token is verified (JWT_SECRET or " +
        'JWT_JWKS_URL, issuer, audience) and each field applies its access rule; anonymous requests may read ' +
        'the catalogue by design, which an API Gateway authorizer would refuse.',
    });
  }
  const accessLogs = new LogGroup(scope, 'HttpApiAccessLogs', {
    retention: RetentionDays.ONE_MONTH,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  const stage = new HttpStage(scope, 'HttpApiStage', {
    httpApi: api,
    stageName: '$default',
    autoDeploy: true,
    throttle: { rateLimit: params.apiThrottleRate.valueAsNumber, burstLimit: params.apiThrottleBurst.valueAsNumber },
    accessLogSettings: {
      destination: new LogGroupLogDestination(accessLogs),
      format: AccessLogFormat.jsonWithStandardFields(),
    },
  });
  return { fn, role, api, stage, alias };
}
