/**
 * createUser and updateUser. Email uniqueness cannot come from GSI1 (eventually consistent,
 * no constraints), so an `EMAIL#<email>/UNIQUE` guard item is written in the same transaction
 * as the profile, conditioned on not existing: of two concurrent sign-ups with one email,
 * exactly one commits.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DataSources } from '../db/loaders.js';
import { EntityType, itemToUser, noStatusCounts, userToItem } from '../table/codecs.js';
import { emailGSI1PK, emailGuardKey, userKey } from '../table/keys.js';
import type { UserModel } from '../table/models.js';
import { Transaction, transactWrite } from '../db/transact.js';
import { failed, InputChecker, succeeded, userError } from './userErrors.js';
import type { UserError, WriteResult } from './userErrors.js';
import { INPUT_LIMITS } from '../table/limits.js';
import { checkEmail, checkId, checkText } from './validate.js';

export interface CreateUserInput {
  /** Decided by the caller's authorization (the token's subject, or an admin's choice). */
  userId: string;
  email: string;
  name: string;
}

export interface UpdateUserInput {
  userId: string;
  expectedVersion: number;
  name?: string | null | undefined;
  email?: string | null | undefined;
}

const guardItem = (email: string, userId: string) => ({
  ...emailGuardKey(email),
  entityType: EntityType.EmailGuard,
  userId,
});

/**
 * One transaction: the profile (must not exist) and the email guard (must not exist). With a
 * `verifiedEmail` (the token's verified `email` claim) the profile gets that address, and an
 * input email that is another address is INVALID_INPUT.
 */
export async function createUser(
  { dynamo, tableName }: DataSources,
  input: CreateUserInput,
  { verifiedEmail, now = new Date() }: { verifiedEmail?: string | undefined; now?: Date } = {},
): Promise<WriteResult<UserModel>> {
  const check = new InputChecker();
  const userId = checkId(check, 'userId', input.userId);
  let email = checkEmail(check, input.email);
  if (verifiedEmail !== undefined && email !== undefined) {
    const verified = checkEmail(check, verifiedEmail);
    if (verified !== undefined && verified !== email) {
      email = check.invalid(['email'], 'email must be the verified email address of your token');
    }
  }
  const name = checkText(check, 'name', input.name, INPUT_LIMITS.nameLength);
  if (!check.ok || userId === undefined || email === undefined || name === undefined) return failed(...check.errors);

  const at = now.toISOString();
  const user: UserModel = {
    kind: 'User',
    userId,
    email,
    name,
    createdAt: at,
    updatedAt: at,
    orderCount: 0,
    statusCounts: noStatusCounts(),
    version: 1,
  };
  const transaction = new Transaction()
    .add('profile', {
      Put: { TableName: tableName, Item: userToItem(user), ConditionExpression: 'attribute_not_exists(PK)' },
    })
    .add('emailGuard', {
      Put: { TableName: tableName, Item: guardItem(email, userId), ConditionExpression: 'attribute_not_exists(PK)' },
    });
  const outcome = await transactWrite(dynamo.doc, transaction);
  if (outcome.committed) return succeeded(user, transaction.touched);
  const errors: UserError[] = [];
  if (outcome.cancellation.failed('profile')) {
    errors.push(userError('USER_EXISTS', ['userId'], `A user with userId "${userId}" already exists`));
  }
  if (outcome.cancellation.failed('emailGuard')) {
    errors.push(userError('EMAIL_TAKEN', ['email'], 'Another user already has this email address'));
  }
  return failed(...errors);
}

/**
 * Changes name and/or email if `expectedVersion` is current. An email change moves the guard
 * in the same transaction: profile update (version check), old guard delete (must still be
 * this user's), new guard put (must not exist).
 */
export async function updateUser(
  { dynamo, tableName }: DataSources,
  input: UpdateUserInput,
  now = new Date(),
): Promise<WriteResult<UserModel>> {
  const check = new InputChecker();
  const userId = checkId(check, 'userId', input.userId);
  const name = input.name == null ? undefined : checkText(check, 'name', input.name, INPUT_LIMITS.nameLength);
  const email = input.email == null ? undefined : checkEmail(check, input.email);
  if (input.name == null && input.email == null) check.invalid(null, 'Give at least one of name and email to change');
  if (!check.ok || userId === undefined) return failed(...check.errors);

  const current = await dynamo.doc.send(
    new GetCommand({ TableName: tableName, Key: userKey(userId), ConsistentRead: true }),
  );
  if (!current.Item) return failed(userError('NOT_FOUND', ['userId'], `No user with userId "${userId}"`));
  const before = itemToUser(current.Item);
  const versionConflict = () =>
    failed<UserModel>(
      userError(
        'VERSION_CONFLICT',
        ['expectedVersion'],
        `The user changed since version ${input.expectedVersion}; re-read it and retry`,
      ),
    );
  if (before.version !== input.expectedVersion) return versionConflict();

  const after: UserModel = {
    ...before,
    name: name ?? before.name,
    email: email ?? before.email,
    updatedAt: now.toISOString(),
    version: before.version + 1,
  };
  const profileUpdate = {
    TableName: tableName,
    Key: userKey(userId),
    UpdateExpression: 'SET #name = :name, email = :email, GSI1PK = :gsi1pk, updatedAt = :now, version = :next',
    ConditionExpression: 'attribute_exists(PK) AND version = :expected',
    ExpressionAttributeNames: { '#name': 'name' },
    ExpressionAttributeValues: {
      ':name': after.name,
      ':email': after.email,
      ':gsi1pk': emailGSI1PK(after.email),
      ':now': after.updatedAt,
      ':next': after.version,
      ':expected': input.expectedVersion,
    },
  };

  if (after.email === before.email) {
    try {
      await dynamo.doc.send(new UpdateCommand(profileUpdate));
      return succeeded(after, [userKey(userId)]);
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return versionConflict();
      throw error;
    }
  }

  const transaction = new Transaction()
    .add('profile', { Update: profileUpdate })
    .add('oldEmailGuard', {
      Delete: {
        TableName: tableName,
        Key: emailGuardKey(before.email),
        ConditionExpression: 'userId = :userId',
        ExpressionAttributeValues: { ':userId': userId },
      },
    })
    .add('newEmailGuard', {
      Put: {
        TableName: tableName,
        Item: guardItem(after.email, userId),
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    });
  const outcome = await transactWrite(dynamo.doc, transaction);
  if (outcome.committed) return succeeded(after, transaction.touched);
  const { cancellation } = outcome;
  if (cancellation.failed('profile') || cancellation.failed('oldEmailGuard')) return versionConflict();
  return failed(userError('EMAIL_TAKEN', ['email'], 'Another user already has this email address'));
}
