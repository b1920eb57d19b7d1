//! The pricing tools.

use serde::Serialize;
use toolwright::{Inject, Principal, tool};

use super::{PriceService, Quote};
use crate::app::{Caller, ShopError, own_tenant, tenant_manager};

/// Quote a price for a quantity of a product.
#[tool(key = "pricing.quote", effect = read, authorize = own_tenant)]
pub async fn quote(
    /// The tenant that owns the product.
    tenant_id: i64,
    /// The product.
    product_id: i64,
    /// How many.
    #[schemars(range(min = 1, max = 1000))]
    quantity: i64,
    prices: Inject<dyn PriceService>,
) -> Result<Quote, ShopError> {
    let unit_cents = prices.unit_price(tenant_id, product_id).await?;
    Ok(Quote {
        product_id,
        quantity,
        unit_cents,
        total_cents: unit_cents * quantity,
    })
}

/// A price change.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct PriceChange {
    /// The product.
    pub product_id: i64,
    /// The price before, in cents.
    pub old_cents: i64,
    /// The price now, in cents.
    pub new_cents: i64,
}

/// Change the price of a product. Needs a manager of the tenant and a person's approval.
#[tool(
    key = "pricing.set",
    effect = write,
    tags = ["managers"],
    authorize = tenant_manager,
    approve = Caller::approval_ledger
)]
pub async fn set_price(
    /// The tenant that owns the product.
    tenant_id: i64,
    /// The product.
    product_id: i64,
    /// The new price of one unit, in cents.
    #[schemars(range(min = 1, max = 10_000_000))]
    price_cents: i64,
    prices: Inject<dyn PriceService>,
) -> Result<PriceChange, ShopError> {
    let old_cents = prices.set(tenant_id, product_id, price_cents).await?;
    Ok(PriceChange {
        product_id,
        old_cents,
        new_cents: price_cents,
    })
}

crate::app::tenant_scoped!(QuoteArgs, SetPriceArgs);
