//! The catalogue of products, per tenant.

pub mod tools;

use std::sync::Arc;

use serde::Serialize;
use toolwright::executor::BoxFuture;

use crate::app::{ShopError, Tx};

/// A product as tools return it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema, sqlx::FromRow)]
pub struct Product {
    /// Identifier.
    pub id: i64,
    /// Stock-keeping unit.
    pub sku: String,
    /// Display name.
    pub name: String,
    /// Price in cents.
    pub price_cents: i64,
    /// Units in stock.
    pub stock: i64,
}

/// Reads products inside the call's transaction.
pub trait ProductService: Send + Sync {
    /// The tenant's products whose name contains `search`.
    fn list(&self, tenant: i64, search: &str) -> BoxFuture<'_, Result<Vec<Product>, ShopError>>;
    /// One of the tenant's products.
    fn get(&self, tenant: i64, id: i64) -> BoxFuture<'_, Result<Product, ShopError>>;
}

/// [`ProductService`] in SQL both engines accept (see [`crate::database`]).
pub struct SqlProducts {
    tx: Arc<Tx>,
}

impl SqlProducts {
    /// Over the call's transaction.
    pub fn new(tx: Arc<Tx>) -> Self {
        SqlProducts { tx }
    }
}

const COLUMNS: &str = "SELECT id, sku, name, price_cents, stock FROM products";

impl ProductService for SqlProducts {
    fn list(&self, tenant: i64, search: &str) -> BoxFuture<'_, Result<Vec<Product>, ShopError>> {
        // SQLite's LIKE ignores ASCII case, PostgreSQL's does not: `LOWER`
        // on both sides makes them agree.
        let pattern = format!("%{search}%");
        Box::pin(async move {
            let mut conn = self.tx.conn().await;
            let query =
                format!("{COLUMNS} WHERE tenant = $1 AND LOWER(name) LIKE LOWER($2) ORDER BY id");
            Ok(sqlx::query_as(&query)
                .bind(tenant)
                .bind(pattern)
                .fetch_all(&mut *conn)
                .await?)
        })
    }

    fn get(&self, tenant: i64, id: i64) -> BoxFuture<'_, Result<Product, ShopError>> {
        Box::pin(async move {
            let mut conn = self.tx.conn().await;
            let query = format!("{COLUMNS} WHERE tenant = $1 AND id = $2");
            sqlx::query_as(&query)
                .bind(tenant)
                .bind(id)
                .fetch_optional(&mut *conn)
                .await?
                .ok_or(ShopError::NotFound("product"))
        })
    }
}
