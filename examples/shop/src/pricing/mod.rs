//! Prices: quotes for everyone, changes for managers, with approval.

pub mod tools;

use std::sync::Arc;

use serde::Serialize;
use toolwright::executor::BoxFuture;

use crate::app::{ShopError, Tx};

/// A price for a quantity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Quote {
    /// The product.
    pub product_id: i64,
    /// How many.
    pub quantity: i64,
    /// Price of one, in cents.
    pub unit_cents: i64,
    /// Price of all, in cents.
    pub total_cents: i64,
}

/// Reads and changes prices inside the call's transaction.
pub trait PriceService: Send + Sync {
    /// The price of one unit.
    fn unit_price(&self, tenant: i64, product_id: i64) -> BoxFuture<'_, Result<i64, ShopError>>;
    /// Sets the price of one unit; returns the old one.
    fn set(
        &self,
        tenant: i64,
        product_id: i64,
        cents: i64,
    ) -> BoxFuture<'_, Result<i64, ShopError>>;
}

/// [`PriceService`] in SQL both engines accept (see [`crate::database`]).
pub struct SqlPrices {
    tx: Arc<Tx>,
}

impl SqlPrices {
    /// Over the call's transaction.
    pub fn new(tx: Arc<Tx>) -> Self {
        SqlPrices { tx }
    }
}

impl PriceService for SqlPrices {
    fn unit_price(&self, tenant: i64, product_id: i64) -> BoxFuture<'_, Result<i64, ShopError>> {
        Box::pin(async move {
            let mut conn = self.tx.conn().await;
            let price: Option<i64> = sqlx::query_scalar(
                "SELECT price_cents FROM products WHERE tenant = $1 AND id = $2",
            )
            .bind(tenant)
            .bind(product_id)
            .fetch_optional(&mut *conn)
            .await?;
            price.ok_or(ShopError::NotFound("product"))
        })
    }

    fn set(
        &self,
        tenant: i64,
        product_id: i64,
        cents: i64,
    ) -> BoxFuture<'_, Result<i64, ShopError>> {
        Box::pin(async move {
            let old = self.unit_price(tenant, product_id).await?;
            let mut conn = self.tx.conn().await;
            sqlx::query("UPDATE products SET price_cents = $1 WHERE tenant = $2 AND id = $3")
                .bind(cents)
                .bind(tenant)
                .bind(product_id)
                .execute(&mut *conn)
                .await?;
            Ok(old)
        })
    }
}
