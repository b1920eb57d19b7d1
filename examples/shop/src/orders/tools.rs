//! The order tools.

use toolwright::{Context, Inject, Principal, tool};

use super::{Order, OrderService};
use crate::app::{Caller, ShopError, own_tenant};

/// Place an order for a product. Needs a person's approval.
#[tool(key = "orders.place", effect = write, authorize = own_tenant, approve = Caller::approval_ledger)]
pub async fn place_order(
    /// The tenant that owns the product.
    tenant_id: i64,
    /// The product.
    product_id: i64,
    /// How many.
    #[schemars(range(min = 1, max = 100))]
    quantity: i64,
    orders: Inject<dyn OrderService>,
    caller: Context<Caller>,
) -> Result<Order, ShopError> {
    orders
        .place(tenant_id, product_id, quantity, &caller.actor.name)
        .await
}

/// Cancel an order and return its stock. Needs a person's approval.
#[tool(key = "orders.cancel", effect = destructive, authorize = own_tenant, approve = Caller::approval_ledger)]
pub async fn cancel_order(
    /// The tenant that owns the order.
    tenant_id: i64,
    /// The order.
    order_id: i64,
    orders: Inject<dyn OrderService>,
) -> Result<Order, ShopError> {
    orders.cancel(tenant_id, order_id).await
}

crate::app::tenant_scoped!(PlaceOrderArgs, CancelOrderArgs);
