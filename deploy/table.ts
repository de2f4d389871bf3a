/**
 * The table, from the one definition the server creates it from (src/table/definition.ts): keys,
 * every GSI and LSI, and the stream come from there, so an index added to the definition is in
 * the stack too. The deployment adds what only AWS has: point-in-time recovery, encryption with
 * the AWS managed key, deletion protection, RETAIN, and the billing mode as a parameter with
 * target-tracking auto scaling of the table and each GSI when provisioned.
 */
import { Aws, Fn, RemovalPolicy, Validations } from 'aws-cdk-lib';
import type { IResolvable } from 'aws-cdk-lib';
import { CfnScalableTarget, CfnScalingPolicy } from 'aws-cdk-lib/aws-applicationautoscaling';
import { CfnTable } from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { tableDefinition } from '../src/table/definition.js';
import type { StackParameters } from './parameters.js';

export interface TableResources {
  table: CfnTable;
  /** Every secondary index name (GSIs and LSIs): the index ARNs a Query may name. */
  indexNames: string[];
  globalIndexNames: string[];
}

type KeySchema = { AttributeName?: string | undefined; KeyType?: string | undefined }[] | undefined;
type Projection = { ProjectionType?: string | undefined; NonKeyAttributes?: string[] | undefined } | undefined;

const keySchema = (keys: KeySchema) =>
  (keys ?? []).map((key) => ({ attributeName: key.AttributeName ?? '', keyType: key.KeyType ?? '' }));
const projection = (value: Projection) => ({
  projectionType: value?.ProjectionType,
  nonKeyAttributes: value?.NonKeyAttributes,
});

export function createTable(scope: Construct, params: StackParameters): TableResources {
  // The definition's TableName is replaced by the parameter; everything else is taken as it is.
  const definition = tableDefinition('unused');
  const throughput = Fn.conditionIf(
    params.isProvisioned.logicalId,
    {
      ReadCapacityUnits: params.minReadCapacity.valueAsNumber,
      WriteCapacityUnits: params.minWriteCapacity.valueAsNumber,
    },
    Aws.NO_VALUE,
  ) as IResolvable;
  const globalIndexes = definition.GlobalSecondaryIndexes ?? [];
  const localIndexes = definition.LocalSecondaryIndexes ?? [];
  const table = new CfnTable(scope, 'Table', {
    tableName: params.tableName.valueAsString,
    billingMode: params.billingMode.valueAsString,
    provisionedThroughput: throughput,
    attributeDefinitions: (definition.AttributeDefinitions ?? []).map((attribute) => ({
      attributeName: attribute.AttributeName ?? '',
      attributeType: attribute.AttributeType ?? '',
    })),
    keySchema: keySchema(definition.KeySchema),
    globalSecondaryIndexes: globalIndexes.map((index) => ({
      indexName: index.IndexName ?? '',
      keySchema: keySchema(index.KeySchema),
      projection: projection(index.Projection),
      provisionedThroughput: throughput,
    })),
    localSecondaryIndexes: localIndexes.map((index) => ({
      indexName: index.IndexName ?? '',
      keySchema: keySchema(index.KeySchema),
      projection: projection(index.Projection),
    })),
    streamSpecification: definition.StreamSpecification?.StreamViewType
      ? { streamViewType: definition.StreamSpecification.StreamViewType }
      : undefined,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    sseSpecification: { sseEnabled: true },
    deletionProtectionEnabled: true,
  });
  Validations.of(table).acknowledge({
    id: 'CloudFormation-Validate::E3639',
    reason:
      'ProvisionedThroughput is set whenever BillingMode is PROVISIONED: both come from the same IsProvisioned ' +
      'condition, which the validator does not evaluate.',
  });
  // The data outlives the stack: deleting or replacing the stack leaves the table in place.
  table.applyRemovalPolicy(RemovalPolicy.RETAIN);

  const globalIndexNames = globalIndexes.map((index) => index.IndexName ?? '');
  autoScaling(scope, params, 'Table', Fn.sub('table/${Table}'), 'table');
  for (const name of globalIndexNames) {
    autoScaling(scope, params, pascal(name), Fn.sub(`table/\${Table}/index/${name}`), 'index');
  }
  return {
    table,
    indexNames: [...globalIndexNames, ...localIndexes.map((index) => index.IndexName ?? '')],
    globalIndexNames,
  };
}

const pascal = (name: string) => name.charAt(0).toUpperCase() + name.slice(1).toLowerCase();

function autoScaling(
  scope: Construct,
  params: StackParameters,
  name: string,
  resourceId: string,
  kind: 'table' | 'index',
): void {
  for (const dimension of ['Read', 'Write'] as const) {
    const target = new CfnScalableTarget(scope, `${name}${dimension}Target`, {
      serviceNamespace: 'dynamodb',
      resourceId,
      scalableDimension: `dynamodb:${kind}:${dimension}CapacityUnits`,
      minCapacity: (dimension === 'Read' ? params.minReadCapacity : params.minWriteCapacity).valueAsNumber,
      maxCapacity: (dimension === 'Read' ? params.maxReadCapacity : params.maxWriteCapacity).valueAsNumber,
    });
    target.cfnOptions.condition = params.isProvisioned;
    const policy = new CfnScalingPolicy(scope, `${name}${dimension}Policy`, {
      policyName: `${name}${dimension}Utilization`,
      policyType: 'TargetTrackingScaling',
      scalingTargetId: target.ref,
      targetTrackingScalingPolicyConfiguration: {
        targetValue: params.targetUtilization.valueAsNumber,
        predefinedMetricSpecification: { predefinedMetricType: `DynamoDB${dimension}CapacityUtilization` },
      },
    });
    policy.cfnOptions.condition = params.isProvisioned;
  }
}
