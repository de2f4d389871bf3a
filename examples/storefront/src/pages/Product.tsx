/**
 * A product page: what it is, what it costs, whether it is in stock, and a quantity to add.
 *
 * Laid out as a summary (name, rating, price, stock, the form) and sections after it (the
 * description, then the reviews with their form, components/Reviews.tsx). ProductDetails
 * (operations.graphql) reads the product, its rating and its newest reviews in one request, which
 * the API answers with one read of the product's item collection.
 */
import { useState } from 'react';
import { cart, MAX_QUANTITY } from '../cart';
import { RatingLine, Reviews, REVIEWS_PAGE } from '../components/Reviews';
import { Empty, Loading, Problem } from '../components/States';
import { ProductDetailsDocument } from '../gql/graphql';
import type { ProductDetailsQuery } from '../gql/graphql';
import { formatMoney } from '../money';
import { href } from '../route';
import { useKept, useQuery } from '../useQuery';

type Product = NonNullable<ProductDetailsQuery['product']>;

export function ProductPage({ productId }: { productId: string }) {
  const query = useQuery(ProductDetailsDocument, { productId, reviews: REVIEWS_PAGE });
  // Read again after a review is written: the page stays while it is.
  const details = { ...useKept(query, productId), retry: query.retry, reload: query.reload };
  if (details.status === 'loading') return <Loading label="Loading the product" />;
  if (details.status === 'failed') return <Problem error={details.error} onRetry={details.retry} />;
  const product = details.data.product;
  if (!product) {
    return (
      <Empty>
        <h1 tabIndex={-1}>No such product</h1>
        <p>
          It may have been taken off the shop. <a href={href.shop()}>Back to the shop</a>
        </p>
      </Empty>
    );
  }
  return (
    <article className="product" aria-labelledby="page-title">
      <nav aria-label="Breadcrumb" className="breadcrumb">
        <ol>
          <li>
            <a href={href.shop()}>Shop</a>
          </li>
          <li>
            <a href={href.category(product.category)}>{product.category}</a>
          </li>
          <li aria-current="page">{product.name}</li>
        </ol>
      </nav>
      <ProductSummary product={product} />
      <ProductSections product={product} onChanged={details.reload} />
    </article>
  );
}

function ProductSummary({ product }: { product: Product }) {
  const soldOut = product.stock === 0;
  return (
    <div className="summary">
      <h1 id="page-title" tabIndex={-1}>
        {product.name}
      </h1>
      <RatingLine rating={product.rating} />
      <p className="price">{formatMoney(product.price.amount, product.price.currencyCode)}</p>
      <p className={soldOut ? 'stock out' : 'stock'}>
        {soldOut ? 'Sold out' : `${product.stock} in stock`}
        {product.soldCount > 0 && <span className="sold"> · {product.soldCount} sold</span>}
      </p>
      {soldOut ? <p>This product is sold out for now.</p> : <AddToCart product={product} />}
    </div>
  );
}

function AddToCart({ product }: { product: Product }) {
  const [quantity, setQuantity] = useState('1');
  const [added, setAdded] = useState('');
  const max = Math.min(product.stock, MAX_QUANTITY);
  const value = Number(quantity);
  const invalid = !Number.isInteger(value) || value < 1 || value > max;
  return (
    <form
      className="add"
      onSubmit={(event) => {
        event.preventDefault();
        if (invalid) return;
        cart.add({
          productId: product.productId,
          name: product.name,
          unitPrice: product.price.amount,
          quantity: value,
        });
        setAdded(`${value} × ${product.name} added to the cart.`);
      }}
    >
      <label>
        Quantity
        <input
          type="number"
          min={1}
          max={max}
          value={quantity}
          aria-invalid={invalid}
          aria-describedby={invalid ? 'quantity-error' : undefined}
          onChange={(e) => {
            setQuantity(e.target.value);
            setAdded('');
          }}
        />
      </label>
      <button type="submit" disabled={invalid}>
        Add to cart
      </button>
      {invalid && (
        <p id="quantity-error" className="field-error">
          Choose 1 to {max}.
        </p>
      )}
      <p className="added" role="status">
        {added && (
          <>
            {added} <a href={href.cart()}>Go to the cart</a>
          </>
        )}
      </p>
    </form>
  );
}

function ProductSections({ product, onChanged }: { product: Product; onChanged: () => void }) {
  return (
    <>
      <section className="description" aria-labelledby="description-title">
        <h2 id="description-title">Description</h2>
        <p>{product.description}</p>
      </section>
      <Reviews product={product} onChanged={onChanged} />
    </>
  );
}
