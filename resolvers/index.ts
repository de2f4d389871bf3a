import type { Resolvers } from '../src/generated/resolvers-types.js';
import { Category } from './Category.js';
import { OrderConnection, ProductConnection, ReviewConnection } from './Connection.js';
import { DateTime } from './DateTime.js';
import { Mutation } from './Mutation.js';
import { Node } from './Node.js';
import { Order, OrderItem } from './Order.js';
import { OrderEvent } from './OrderEvent.js';
import { Product } from './Product.js';
import { Query } from './Query.js';
import { ProductRating, Review } from './Review.js';
import { Subscription } from './Subscription.js';
import { User } from './User.js';

export const resolvers: Resolvers = {
  DateTime,
  Node,
  Query,
  Mutation,
  Subscription,
  User,
  Order,
  OrderItem,
  OrderEvent,
  Product,
  Category,
  OrderConnection,
  ProductConnection,
  Review,
  ProductRating,
  ReviewConnection,
};
