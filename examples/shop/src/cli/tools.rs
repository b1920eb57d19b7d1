//! `shop tools [--format NAME]`: the tools as a table, or as a model
//! provider's request expects them.

use toolwright::providers::{self, Format};
use toolwright::{BoxError, Catalog};

use crate::app::{MODULES, Shop};
use crate::database::open_database;
use crate::table::print_catalog;

/// Prints the tools as a table, or in `format`.
pub(super) async fn print(format: Option<Format>) -> Result<(), BoxError> {
    match format {
        None => {
            let shop = Shop::new(open_database("sqlite::memory:").await?).await?;
            print_catalog(&shop.executor.tools());
        }
        Some(format) => {
            let catalog = Catalog::discover_in(MODULES)?;
            let tools = providers::export(&catalog, format)?;
            println!("{}", serde_json::to_string_pretty(&tools)?);
        }
    }
    Ok(())
}
