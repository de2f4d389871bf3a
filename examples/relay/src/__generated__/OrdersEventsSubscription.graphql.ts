/**
 * @generated SignedSource<<0039944e9780c0333e3c8428ae3639bd>>
 * @relayHash 1a863557f953edff9bcfd8c8f8ef69de
 * @lightSyntaxTransform
 */

/* tslint:disable */
/* eslint-disable */
// @ts-nocheck

// @relayRequestID 1d71e27a569d89e2bdb2677722b2ed65141d9ddd19c2d1fde9e5114039b0351b

import { ConcreteRequest } from 'relay-runtime';
export type OrderEventType = "ORDER_PLACED" | "ORDER_STATUS_CHANGED" | "%future added value";
export type OrderStatus = "CANCELLED" | "DELIVERED" | "PLACED" | "SHIPPED" | "%future added value";
export type OrdersEventsSubscription$variables = Record<PropertyKey, never>;
export type OrdersEventsSubscription$data = {
  readonly orderEvents: {
    readonly order: {
      readonly orderId: string;
      readonly status: OrderStatus;
    };
    readonly type: OrderEventType;
  };
};
export type OrdersEventsSubscription = {
  response: OrdersEventsSubscription$data;
  variables: OrdersEventsSubscription$variables;
};

const node: ConcreteRequest = (function(){
var v0 = {
  "alias": null,
  "args": null,
  "kind": "ScalarField",
  "name": "type",
  "storageKey": null
},
v1 = {
  "alias": null,
  "args": null,
  "kind": "ScalarField",
  "name": "orderId",
  "storageKey": null
},
v2 = {
  "alias": null,
  "args": null,
  "kind": "ScalarField",
  "name": "status",
  "storageKey": null
};
return {
  "fragment": {
    "argumentDefinitions": [],
    "kind": "Fragment",
    "metadata": null,
    "name": "OrdersEventsSubscription",
    "selections": [
      {
        "alias": null,
        "args": null,
        "concreteType": "OrderEvent",
        "kind": "LinkedField",
        "name": "orderEvents",
        "plural": false,
        "selections": [
          (v0/*:: as any*/),
          {
            "alias": null,
            "args": null,
            "concreteType": "Order",
            "kind": "LinkedField",
            "name": "order",
            "plural": false,
            "selections": [
              (v1/*:: as any*/),
              (v2/*:: as any*/)
            ],
            "storageKey": null
          }
        ],
        "storageKey": null
      }
    ],
    "type": "Subscription",
    "abstractKey": null
  },
  "kind": "Request",
  "operation": {
    "argumentDefinitions": [],
    "kind": "Operation",
    "name": "OrdersEventsSubscription",
    "selections": [
      {
        "alias": null,
        "args": null,
        "concreteType": "OrderEvent",
        "kind": "LinkedField",
        "name": "orderEvents",
        "plural": false,
        "selections": [
          (v0/*:: as any*/),
          {
            "alias": null,
            "args": null,
            "concreteType": "Order",
            "kind": "LinkedField",
            "name": "order",
            "plural": false,
            "selections": [
              (v1/*:: as any*/),
              (v2/*:: as any*/),
              {
                "alias": null,
                "args": null,
                "kind": "ScalarField",
                "name": "id",
                "storageKey": null
              }
            ],
            "storageKey": null
          }
        ],
        "storageKey": null
      }
    ]
  },
  "params": {
    "id": "1d71e27a569d89e2bdb2677722b2ed65141d9ddd19c2d1fde9e5114039b0351b",
    "metadata": {},
    "name": "OrdersEventsSubscription",
    "operationKind": "subscription",
    "text": null
  }
};
})();

(node as any).hash = "d7639b06f982b7f33cc8b912621b42f8";

export default node;
