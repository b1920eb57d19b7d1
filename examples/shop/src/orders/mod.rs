//! Orders: placing one takes stock; cancelling one gives it back.

pub mod tools;

use std::sync::Arc;

use serde::Serialize;
use sqlx::Row as _;
use sqlx::any::AnyRow;
use toolwright::executor::BoxFuture;

use crate::app::{ShopError, Tx};

/// An order as tools return it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
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

/// By hand, not derived: `cancelled` is a 0/1 integer in both engines
/// (see [`crate::database`]).
impl sqlx::FromRow<'_, AnyRow> for Order {
    fn from_row(row: &AnyRow) -> Result<Self, sqlx::Error> {
        Ok(Order {
            id: row.try_get("id")?,
            product_id: row.try_get("product_id")?,
            quantity: row.try_get("quantity")?,
            total_cents: row.try_get("total_cents")?,
            placed_by: row.try_get("placed_by")?,
            cancelled: row.try_get::<i64, _>("cancelled")? != 0,
        })
    }
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

/// [`OrderService`] in SQL both engines accept (see [`crate::database`]).
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
                "SELECT price_cents, stock FROM products WHERE tenant = $1 AND id = $2",
            )
            .bind(tenant)
            .bind(product_id)
            .fetch_optional(&mut *conn)
            .await?;
            let (price, stock) = product.ok_or(ShopError::NotFound("product"))?;
            let order: Order = sqlx::query_as(&format!(
                "INSERT INTO orders (tenant, product_id, quantity, total_cents, placed_by)
                 VALUES ($1, $2, $3, $4, $5)
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
            sqlx::query("UPDATE products SET stock = stock - $1 WHERE id = $2")
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
                "UPDATE orders SET cancelled = 1 WHERE tenant = $1 AND id = $2 AND cancelled = 0
                 RETURNING {ORDER_COLUMNS}"
            ))
            .bind(tenant)
            .bind(order_id)
            .fetch_optional(&mut *conn)
            .await?
            .ok_or(ShopError::NotFound("open order"))?;
            sqlx::query("UPDATE products SET stock = stock + $1 WHERE id = $2")
                .bind(order.quantity)
                .bind(order.product_id)
                .execute(&mut *conn)
                .await?;
            Ok(order)
        })
    }
}
