/**
 * @generated SignedSource<<c061f758599443059b0f18f34fcf3a36>>
 * @relayHash a32573e971fe249c657845d86c759885
 * @lightSyntaxTransform
 */

/* tslint:disable */
/* eslint-disable */
// @ts-nocheck

// @relayRequestID bab995f31b030b4bba1373756c4d8e5719a73b3404f7fd7b0c757e67592aeb68

import { ConcreteRequest } from 'relay-runtime';
export type ErrorCode = "EMAIL_TAKEN" | "IDEMPOTENCY_KEY_REUSED" | "INSUFFICIENT_STOCK" | "INVALID_INPUT" | "INVALID_STATUS" | "NOT_FOUND" | "PRODUCT_EXISTS" | "REVIEW_EXISTS" | "USER_EXISTS" | "VERSION_CONFLICT" | "%future added value";
export type OrderStatus = "CANCELLED" | "DELIVERED" | "PLACED" | "SHIPPED" | "%future added value";
export type PlaceOrderInput = {
  idempotencyKey: string;
  items: ReadonlyArray<OrderLineInput>;
  userId: string;
};
export type OrderLineInput = {
  productId: string;
  quantity: number;
};
export type OrdersPlaceOrderMutation$variables = {
  input: PlaceOrderInput;
};
export type OrdersPlaceOrderMutation$data = {
  readonly placeOrder: {
    readonly order: {
      readonly orderId: string;
      readonly status: OrderStatus;
    } | null | undefined;
    readonly userErrors: ReadonlyArray<{
      readonly code: ErrorCode;
      readonly field: ReadonlyArray<string> | null | undefined;
      readonly message: string;
    }>;
  };
};
export type OrdersPlaceOrderMutation = {
  response: OrdersPlaceOrderMutation$data;
  variables: OrdersPlaceOrderMutation$variables;
};

const node: ConcreteRequest = (function(){
var v0 = [
  {
    "defaultValue": null,
    "kind": "LocalArgument",
    "name": "input"
  }
],
v1 = [
  {
    "kind": "Variable",
    "name": "input",
    "variableName": "input"
  }
],
v2 = {
  "alias": null,
  "args": null,
  "kind": "ScalarField",
  "name": "orderId",
  "storageKey": null
},
v3 = {
  "alias": null,
  "args": null,
  "kind": "ScalarField",
  "name": "status",
  "storageKey": null
},
v4 = {
  "alias": null,
  "args": null,
  "concreteType": "UserError",
  "kind": "LinkedField",
  "name": "userErrors",
  "plural": true,
  "selections": [
    {
      "alias": null,
      "args": null,
      "kind": "ScalarField",
      "name": "code",
      "storageKey": null
    },
    {
      "alias": null,
      "args": null,
      "kind": "ScalarField",
      "name": "field",
      "storageKey": null
    },
    {
      "alias": null,
      "args": null,
      "kind": "ScalarField",
      "name": "message",
      "storageKey": null
    }
  ],
  "storageKey": null
};
return {
  "fragment": {
    "argumentDefinitions": (v0/*:: as any*/),
    "kind": "Fragment",
    "metadata": null,
    "name": "OrdersPlaceOrderMutation",
    "selections": [
      {
        "alias": null,
        "args": (v1/*:: as any*/),
        "concreteType": "PlaceOrderPayload",
        "kind": "LinkedField",
        "name": "placeOrder",
        "plural": false,
        "selections": [
          {
            "alias": null,
            "args": null,
            "concreteType": "Order",
            "kind": "LinkedField",
            "name": "order",
            "plural": false,
            "selections": [
              (v2/*:: as any*/),
              (v3/*:: as any*/)
            ],
            "storageKey": null
          },
          (v4/*:: as any*/)
        ],
        "storageKey": null
      }
    ],
    "type": "Mutation",
    "abstractKey": null
  },
  "kind": "Request",
  "operation": {
    "argumentDefinitions": (v0/*:: as any*/),
    "kind": "Operation",
    "name": "OrdersPlaceOrderMutation",
    "selections": [
      {
        "alias": null,
        "args": (v1/*:: as any*/),
        "concreteType": "PlaceOrderPayload",
        "kind": "LinkedField",
        "name": "placeOrder",
        "plural": false,
        "selections": [
          {
            "alias": null,
            "args": null,
            "concreteType": "Order",
            "kind": "LinkedField",
            "name": "order",
            "plural": false,
            "selections": [
              (v2/*:: as any*/),
              (v3/*:: as any*/),
              {
                "alias": null,
                "args": null,
                "kind": "ScalarField",
                "name": "id",
                "storageKey": null
              }
            ],
            "storageKey": null
          },
          (v4/*:: as any*/)
        ],
        "storageKey": null
      }
    ]
  },
  "params": {
    "id": "bab995f31b030b4bba1373756c4d8e5719a73b3404f7fd7b0c757e67592aeb68",
    "metadata": {},
    "name": "OrdersPlaceOrderMutation",
    "operationKind": "mutation",
    "text": null
  }
};
})();

(node as any).hash = "01c71ab2c68b31dff590bc99b536338f";

export default node;
