/** Parent types of the connection resolvers (codegen `mappers` in codegen.yml point here). */
import type { Edge, Page } from '../db/pagination.js';
import type { OrderModel, ProductModel } from '../table/models.js';

export type OrderEdgeModel = Edge<OrderModel>;
export type ProductEdgeModel = Edge<ProductModel>;
/** `totalCount` rides along from the user's profile: no read of its own. */
export type OrderConnectionModel = Page<OrderModel> & { totalCount: number | null };
export type ProductConnectionModel = Page<ProductModel>;
