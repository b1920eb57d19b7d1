//! Orders: placing one takes stock; cancelling one gives it back.

pub mod tools;

use std::sync::Arc;

use serde::Serialize;
use toolwright::executor::BoxFuture;

use crate::app::{ShopError, Tx};

/// An order as tools return it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema, sqlx::FromRow)]
pub struct Order {
    /// Identifier.
    pub id: i64,
    /// The product.
    pub product_id: i64,
    /// How many.
    pub quantity: i64,
    /// What it cost, in cents.
    pub total_cents: i64,
    /// Who placed it.
    pub placed_by: String,
    /// Whether it was cancelled.
    pub cancelled: bool,
}

/// Places and cancels orders inside the call's transaction.
pub trait OrderService: Send + Sync {
    /// Records the order, then takes the stock: if there is not enough, the
    /// error rolls the recorded order back with the rest of the call.
    fn place(
        &self,
        tenant: i64,
        product_id: i64,
        quantity: i64,
        by: &str,
    ) -> BoxFuture<'_, Result<Order, ShopError>>;
    /// Cancels an order and returns its stock.
    fn cancel(&self, tenant: i64, order_id: i64) -> BoxFuture<'_, Result<Order, ShopError>>;
}

/// What `RETURNING` gives back to build an [`Order`].
const ORDER_COLUMNS: &str = "id, product_id, quantity, total_cents, placed_by, cancelled";

/// [`OrderService`] on SQLite.
pub struct SqlOrders {
    tx: Arc<Tx>,
}

impl SqlOrders {
    /// Over the call's transaction.
    pub fn new(tx: Arc<Tx>) -> Self {
        SqlOrders { tx }
    }
}

impl OrderService for SqlOrders {
    fn place(
        &self,
        tenant: i64,
        product_id: i64,
        quantity: i64,
        by: &str,
    ) -> BoxFuture<'_, Result<Order, ShopError>> {
        let by = by.to_owned();
        Box::pin(async move {
            let mut conn = self.tx.conn().await;
            let product: Option<(i64, i64)> = sqlx::query_as(
                "SELECT price_cents, stock FROM products WHERE tenant = ? AND id = ?",
            )
            .bind(tenant)
            .bind(product_id)
            .fetch_optional(&mut *conn)
            .await?;
            let (price, stock) = product.ok_or(ShopError::NotFound("product"))?;
            let order: Order = sqlx::query_as(&format!(
                "INSERT INTO orders (tenant, product_id, quantity, total_cents, placed_by)
                 VALUES (?, ?, ?, ?, ?)
                 RETURNING {ORDER_COLUMNS}"
            ))
            .bind(tenant)
            .bind(product_id)
            .bind(quantity)
            .bind(price * quantity)
            .bind(&by)
            .fetch_one(&mut *conn)
            .await?;
            if stock < quantity {
                return Err(ShopError::OutOfStock { available: stock });
            }
            sqlx::query("UPDATE products SET stock = stock - ? WHERE id = ?")
                .bind(quantity)
                .bind(product_id)
                .execute(&mut *conn)
                .await?;
            Ok(order)
        })
    }

    fn cancel(&self, tenant: i64, order_id: i64) -> BoxFuture<'_, Result<Order, ShopError>> {
        Box::pin(async move {
            let mut conn = self.tx.conn().await;
            let order: Order = sqlx::query_as(&format!(
                "UPDATE orders SET cancelled = 1 WHERE tenant = ? AND id = ? AND cancelled = 0
                 RETURNING {ORDER_COLUMNS}"
            ))
            .bind(tenant)
            .bind(order_id)
            .fetch_optional(&mut *conn)
            .await?
            .ok_or(ShopError::NotFound("open order"))?;
            sqlx::query("UPDATE products SET stock = stock + ? WHERE id = ?")
                .bind(order.quantity)
                .bind(order.product_id)
                .execute(&mut *conn)
                .await?;
            Ok(order)
        })
    }
}
