/**
 * The stack's CloudFormation parameters (`npx cdk deploy --parameters Name=value`), with the
 * conditions derived from them. A parameter, not a context value, keeps one template for every
 * setting: the checked-in template is the one that deploys.
 */
import { CfnCondition, CfnParameter, Fn } from 'aws-cdk-lib';
import type { Construct } from 'constructs';

export interface StackParameters {
  tableName: CfnParameter;
  billingMode: CfnParameter;
  minReadCapacity: CfnParameter;
  maxReadCapacity: CfnParameter;
  minWriteCapacity: CfnParameter;
  maxWriteCapacity: CfnParameter;
  targetUtilization: CfnParameter;
  apiReservedConcurrency: CfnParameter;
  apiProvisionedConcurrency: CfnParameter;
  apiThrottleRate: CfnParameter;
  apiThrottleBurst: CfnParameter;
  jwtJwksUrl: CfnParameter;
  jwtIssuer: CfnParameter;
  jwtAudience: CfnParameter;
  alarmEmail: CfnParameter;
  isProvisioned: CfnCondition;
  hasApiReservedConcurrency: CfnCondition;
  hasApiProvisionedConcurrency: CfnCondition;
  hasAlarmEmail: CfnCondition;
}

const number = (scope: Construct, id: string, defaultValue: number, description: string, min = 0, max?: number) =>
  new CfnParameter(scope, id, {
    type: 'Number',
    default: defaultValue,
    minValue: min,
    ...(max === undefined ? {} : { maxValue: max }),
    description,
  });

export function defineParameters(scope: Construct): StackParameters {
  const p = {
    tableName: new CfnParameter(scope, 'TableName', {
      type: 'String',
      default: 'MainTable',
      allowedPattern: '[A-Za-z0-9_.-]{3,255}',
      description: 'The DynamoDB table (TABLE_NAME of every function and of npm run migrate)',
    }),
    billingMode: new CfnParameter(scope, 'BillingMode', {
      type: 'String',
      default: 'PAY_PER_REQUEST',
      allowedValues: ['PAY_PER_REQUEST', 'PROVISIONED'],
      description: 'On-demand, or provisioned with target-tracking auto scaling of the table and every GSI',
    }),
    minReadCapacity: number(scope, 'MinReadCapacity', 5, 'PROVISIONED: lowest RCU of the table and of each GSI', 1),
    maxReadCapacity: number(scope, 'MaxReadCapacity', 100, 'PROVISIONED: highest RCU of the table and of each GSI', 1),
    minWriteCapacity: number(scope, 'MinWriteCapacity', 5, 'PROVISIONED: lowest WCU of the table and of each GSI', 1),
    maxWriteCapacity: number(
      scope,
      'MaxWriteCapacity',
      100,
      'PROVISIONED: highest WCU of the table and of each GSI',
      1,
    ),
    targetUtilization: number(scope, 'TargetUtilization', 70, 'PROVISIONED: target consumed/provisioned, %', 20, 90),
    apiReservedConcurrency: number(
      scope,
      'ApiReservedConcurrency',
      0,
      'Reserved concurrency of the GraphQL function (its ceiling and its guaranteed share); 0 leaves it unreserved',
    ),
    apiProvisionedConcurrency: number(
      scope,
      'ApiProvisionedConcurrency',
      0,
      'Provisioned (pre-initialised) environments on the live alias of the GraphQL function; 0 for none (billed per hour when set)',
    ),
    apiThrottleRate: number(scope, 'ApiThrottleRate', 100, 'HTTP API steady-state requests per second', 1),
    apiThrottleBurst: number(scope, 'ApiThrottleBurst', 200, 'HTTP API burst of requests', 1),
    jwtJwksUrl: new CfnParameter(scope, 'JwtJwksUrl', {
      type: 'String',
      default: '',
      description:
        'Your identity provider JWKS URL (RS256/ES256 tokens); empty: HS256 tokens signed with the generated JWT secret',
    }),
    jwtIssuer: new CfnParameter(scope, 'JwtIssuer', {
      type: 'String',
      default: 'tablegraph-local',
      description: 'The iss every token must carry',
    }),
    jwtAudience: new CfnParameter(scope, 'JwtAudience', {
      type: 'String',
      default: 'tablegraph',
      description: 'The aud every token must carry',
    }),
    alarmEmail: new CfnParameter(scope, 'AlarmEmail', {
      type: 'String',
      default: '',
      description: 'Subscribed to the alarm topic when set (confirm the e-mail AWS sends)',
    }),
  };
  const notZero = (parameter: CfnParameter) => Fn.conditionNot(Fn.conditionEquals(parameter.valueAsNumber, 0));
  return {
    ...p,
    isProvisioned: new CfnCondition(scope, 'IsProvisioned', {
      expression: Fn.conditionEquals(p.billingMode.valueAsString, 'PROVISIONED'),
    }),
    hasApiReservedConcurrency: new CfnCondition(scope, 'HasApiReservedConcurrency', {
      expression: notZero(p.apiReservedConcurrency),
    }),
    hasApiProvisionedConcurrency: new CfnCondition(scope, 'HasApiProvisionedConcurrency', {
      expression: notZero(p.apiProvisionedConcurrency),
    }),
    hasAlarmEmail: new CfnCondition(scope, 'HasAlarmEmail', {
      expression: Fn.conditionNot(Fn.conditionEquals(p.alarmEmail.valueAsString, '')),
    }),
  };
}
