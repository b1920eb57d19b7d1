//! The product tools.

use toolwright::{Context, Inject, tool};

use super::{Product, ProductService};
use crate::app::{Caller, ShopError, own_tenant, signed_in};

/// List the caller's products, optionally only those whose name contains a text.
#[tool(key = "products.list", effect = read, authorize = signed_in)]
pub async fn list_products(
    /// Only products whose name contains this text.
    #[schemars(length(max = 40))]
    search: Option<String>,
    products: Inject<dyn ProductService>,
    caller: Context<Caller>,
) -> Result<Vec<Product>, ShopError> {
    products
        .list(caller.actor.tenant, search.as_deref().unwrap_or(""))
        .await
}

/// Read one product of a tenant.
#[tool(key = "products.get", effect = read, authorize = own_tenant)]
pub async fn get_product(
    /// The tenant that owns the product.
    tenant_id: i64,
    /// The product's identifier.
    product_id: i64,
    products: Inject<dyn ProductService>,
) -> Result<Product, ShopError> {
    products.get(tenant_id, product_id).await
}

crate::app::tenant_scoped!(GetProductArgs);
