//! Tools written in a crate that reaches toolwright by another name: as a
//! renamed dependency (`tw`), and through a facade module, as a company's
//! own SDK crate would re-export it. `#[tool(crate = ...)]` says where.
//! There is no dependency named `toolwright` here, so a path the generated
//! code did not take from `crate` would not compile.

use std::sync::Arc;

use tw::executor::Verdict;
use tw::{Context, Inject, Invocation, tool};

/// A facade, as an SDK crate that wraps toolwright would offer it.
pub mod sdk {
    pub use tw as toolwright;
}

/// Who is calling.
#[derive(Clone)]
pub struct Caller {
    /// May they change prices?
    pub manager: bool,
}

/// Where prices are kept.
pub struct PriceBook {
    /// The price of everything, in cents.
    pub cents: u64,
}

async fn managers_only<A>(caller: &Caller, _: &Invocation<'_, A>) -> bool {
    caller.manager
}

fn ask_a_person<A>(_: &Caller, _: &Invocation<'_, A>) -> Verdict {
    Verdict::Pending
}

/// The price of a quantity of a product.
#[tool(crate = tw, key = "prices.quote", effect = read, authorize = public)]
pub async fn quote(
    /// How many.
    #[schemars(range(min = 1, max = 100))]
    quantity: u32,
    /// Whether to round to whole units.
    #[default = true]
    round: bool,
    book: Inject<PriceBook>,
    caller: Context<Caller>,
) -> Result<u64, std::num::TryFromIntError> {
    let _ = (round, caller.manager);
    Ok(u64::from(quantity) * book.cents)
}

/// Set the price of everything.
#[tool(
    crate = "crate::sdk::toolwright",
    key = "prices.set",
    effect = write,
    authorize = managers_only,
    approve = ask_a_person
)]
pub async fn set_price(
    /// The new price.
    #[schemars(extend("x-unit" = "cents"))]
    cents: u64,
    // A path the user writes through the facade is left as written.
    book: sdk::toolwright::Inject<PriceBook>,
) -> u64 {
    cents.min(book.cents * 100)
}

/// Say that the prices are up to date: inputs only, no result, a title and
/// a timeout.
#[tool(
    crate = tw,
    key = "prices.ping",
    title = "Ping the price book",
    effect = read,
    authorize = public,
    timeout = "5s"
)]
pub async fn ping(
    /// What to say.
    note: String,
) {
    let _ = note;
}

/// The executor over this crate's tools, with a price book of 250 cents.
pub fn executor() -> tw::Executor {
    let catalog = tw::Catalog::builder()
        .register::<QuoteArgs>()
        .register::<SetPriceArgs>()
        .register::<PingArgs>()
        .build()
        .expect("the tools' names and keys are distinct");
    let container = tw::Container::builder()
        .app(Arc::new(PriceBook { cents: 250 }))
        .build();
    tw::Executor::new(catalog, container).expect("every injected value is provided")
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tw::CallError;

    use super::*;

    #[tokio::test]
    async fn tools_declared_through_another_name_run_the_whole_pipeline() {
        let executor = executor();
        let clerk = Caller { manager: false };
        let manager = Caller { manager: true };
        let quoted = executor
            .invoke("quote", json!({"quantity": 3}), &clerk)
            .await
            .unwrap();
        assert_eq!(quoted, json!(750));
        let typed = executor
            .call(
                QuoteArgs {
                    quantity: 2,
                    round: false,
                },
                &clerk,
            )
            .await
            .unwrap();
        assert_eq!(typed, 500);
        assert!(matches!(
            executor
                .invoke("quote", json!({"quantity": 0}), &clerk)
                .await,
            Err(CallError::InvalidArguments { .. })
        ));
        assert!(matches!(
            executor
                .invoke("set_price", json!({"cents": 300}), &clerk)
                .await,
            Err(CallError::Denied { .. })
        ));
        assert!(matches!(
            executor
                .invoke("set_price", json!({"cents": 300}), &manager)
                .await,
            Err(CallError::ApprovalRequired(_))
        ));
        let pinged = executor
            .invoke("ping", json!({"note": "fresh"}), &clerk)
            .await
            .unwrap();
        assert_eq!(pinged, json!(null));
        let tools = executor.tools();
        let ping = tools.get("ping").unwrap();
        assert_eq!(ping.title(), Some("Ping the price book"));
    }

    #[test]
    fn their_schemas_are_generated_through_it_too() {
        let executor = executor();
        let catalog = executor.tools();
        let quote = catalog.get("quote").unwrap().input_schema();
        assert_eq!(quote["properties"]["quantity"]["maximum"], json!(100));
        assert_eq!(quote["properties"]["round"]["default"], json!(true));
        // This one is derived by schemars (for `extend`), through the facade.
        let set_price = catalog.get("set_price").unwrap().input_schema();
        assert_eq!(set_price["properties"]["cents"]["x-unit"], json!("cents"));
        assert_eq!(set_price["additionalProperties"], json!(false));
    }
}
