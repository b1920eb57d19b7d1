//! Link-time discovery: duplicates are refused naming both declarations,
//! modules select their tools, and the order never changes.

use serde_json::json;
use toolwright::{Catalog, Effect, registry::Conflict};

mod shop {
    pub(crate) mod products {
        use toolwright::tool;

        /// List products.
        #[tool(key = "products.list", effect = read, authorize = public)]
        pub(crate) async fn list_products() -> Vec<String> {
            Vec::new()
        }

        /// Read one product.
        #[tool(
            key = "products.get",
            title = "Get a product",
            effect = read,
            authorize = public,
            timeout = "2s"
        )]
        pub(crate) async fn get_product(
            /// The product's identifier.
            id: u64,
        ) -> Option<String> {
            let _ = id;
            None
        }
    }

    pub(crate) mod productsx {
        use toolwright::tool;

        /// A module whose name only starts like `products`.
        #[tool(key = "productsx.ping", effect = read, authorize = public)]
        pub(crate) async fn ping() -> bool {
            true
        }
    }

    pub(crate) mod orders {
        use toolwright::{Invocation, tool};

        async fn nobody<A>(_: &(), _: &Invocation<'_, A>) -> bool {
            false
        }

        /// Place an order.
        #[tool(key = "orders.place", effect = write, authorize = public, approve = nobody, idempotent = false, open_world = true)]
        pub(crate) async fn place_order(sku: String) -> u64 {
            sku.len() as u64
        }
    }
}

mod legacy {
    use toolwright::tool;

    /// Same key as the new list tool.
    #[tool(key = "products.list", name = "legacy_list_products", effect = read, authorize = public)]
    pub(crate) async fn list_products() -> Vec<String> {
        Vec::new()
    }

    /// Same name as the new tool.
    #[tool(key = "legacy.get", name = "get_product", effect = read, authorize = public)]
    pub(crate) async fn get_product_v1(id: u64) -> u64 {
        id
    }
}

#[test]
fn duplicate_keys_and_names_fail_discovery_naming_both_locations() {
    let error = Catalog::discover().unwrap_err();
    assert_eq!(error.conflicts().len(), 2, "{error}");
    let key = error
        .conflicts()
        .iter()
        .find_map(|c| match c {
            Conflict::Key {
                key, first, second, ..
            } => Some((key.as_str(), *first, *second)),
            _ => None,
        })
        .expect("a key conflict");
    assert_eq!(key.0, "products.list");
    let modules = [key.1.module_path, key.2.module_path];
    assert!(modules.contains(&"catalog::shop::products"), "{modules:?}");
    assert!(modules.contains(&"catalog::legacy"), "{modules:?}");
    assert!(key.1.file.ends_with("catalog.rs") && key.1.line > 0);

    let name = error
        .conflicts()
        .iter()
        .find_map(|c| match c {
            Conflict::Name {
                name,
                first,
                second,
                ..
            } => Some((name.as_str(), *first, *second)),
            _ => None,
        })
        .expect("a name conflict");
    assert_eq!(name.0, "get_product");
    assert_ne!(name.1, name.2);

    let message = error.to_string();
    assert!(
        message.contains("duplicate tool key `products.list`"),
        "{message}"
    );
    assert!(message.contains("(catalog::legacy)"), "{message}");
    assert!(message.contains("catalog.rs:"), "{message}");
}

#[test]
fn discover_in_keeps_whole_modules_only() {
    let catalog = Catalog::discover_in(["catalog::shop::products"]).unwrap();
    let keys: Vec<&str> = catalog.iter().map(|t| t.key()).collect();
    assert_eq!(keys, ["products.get", "products.list"]);

    let catalog = Catalog::discover_in(["catalog::shop"]).unwrap();
    let keys: Vec<&str> = catalog.iter().map(|t| t.key()).collect();
    assert_eq!(
        keys,
        [
            "orders.place",
            "products.get",
            "products.list",
            "productsx.ping"
        ]
    );
}

#[test]
fn catalog_order_is_stable_and_sorted_by_key() {
    let first: Vec<_> = Catalog::discover_in(["catalog::shop"])
        .unwrap()
        .iter()
        .map(|t| (t.key().to_owned(), t.name().to_owned()))
        .collect();
    for _ in 0..5 {
        let again: Vec<_> = Catalog::discover_in(["catalog::shop"])
            .unwrap()
            .iter()
            .map(|t| (t.key().to_owned(), t.name().to_owned()))
            .collect();
        assert_eq!(first, again);
    }
    let serialized_once =
        serde_json::to_string(&Catalog::discover_in(["catalog::shop"]).unwrap()).unwrap();
    let serialized_twice =
        serde_json::to_string(&Catalog::discover_in(["catalog::shop"]).unwrap()).unwrap();
    assert_eq!(
        serialized_once, serialized_twice,
        "same binary, same schemas"
    );
}

#[test]
fn lookup_by_name_and_by_key() {
    let catalog = Catalog::discover_in(["catalog::shop"]).unwrap();
    assert_eq!(catalog.get("get_product").unwrap().key(), "products.get");
    assert_eq!(
        catalog.get_by_key("orders.place").unwrap().name(),
        "place_order"
    );
    assert!(catalog.get("nope").is_none());
    assert!(catalog.get_by_key("nope").is_none());
}

#[test]
fn descriptor_serializes_metadata_and_schemas() {
    let catalog = Catalog::discover_in(["catalog::shop"]).unwrap();
    let get = serde_json::to_value(catalog.get("get_product").unwrap()).unwrap();
    assert_eq!(get["key"], json!("products.get"));
    assert_eq!(get["name"], json!("get_product"));
    assert_eq!(get["title"], json!("Get a product"));
    assert_eq!(get["description"], json!("Read one product."));
    assert_eq!(get["effect"], json!("read"));
    assert_eq!(
        get["idempotent"],
        json!(true),
        "read tools are idempotent by default"
    );
    assert_eq!(get["input_schema"]["type"], json!("object"));
    assert_eq!(
        get["input_schema"]["properties"]["id"]["description"],
        json!("The product's identifier.")
    );
    assert_eq!(get["output_schema"]["type"], json!(["string", "null"]));
    assert_eq!(
        get["location"]["module_path"],
        json!("catalog::shop::products")
    );
    assert!(get.get("title").is_some());
    assert_eq!(get["tags"], json!([]));

    let place = catalog.get("place_order").unwrap();
    assert_eq!(place.effect(), Effect::Write);
    assert!(!place.idempotent());
    assert!(place.open_world());
    assert_eq!(
        catalog.get("get_product").unwrap().timeout(),
        Some(std::time::Duration::from_secs(2))
    );
}

mod tagged {
    use toolwright::tool;

    /// Look up a customer.
    #[tool(key = "customers.get", effect = read, authorize = public, tags = ["pii", "crm", "eu-only"])]
    pub(crate) async fn get_customer(id: u64) -> u64 {
        id
    }

    /// Count the customers.
    #[tool(key = "customers.count", effect = read, authorize = public)]
    pub(crate) async fn count_customers() -> u64 {
        0
    }
}

#[test]
fn tags_reach_the_entry_and_the_descriptor_in_the_order_written() {
    use toolwright::Tool;

    let catalog = Catalog::builder()
        .register::<tagged::GetCustomerArgs>()
        .register::<tagged::CountCustomersArgs>()
        .build()
        .unwrap();

    let tagged = catalog.get("get_customer").unwrap();
    assert_eq!(tagged.tags(), ["pii", "crm", "eu-only"]);
    assert_eq!(tagged.tags(), tagged::GetCustomerArgs::TAGS);
    let descriptor = serde_json::to_value(tagged).unwrap();
    assert_eq!(descriptor["tags"], json!(["pii", "crm", "eu-only"]));

    // No tags: an empty list, never a missing field.
    let untagged = catalog.get("count_customers").unwrap();
    assert!(untagged.tags().is_empty());
    let descriptor = serde_json::to_value(untagged).unwrap();
    assert_eq!(descriptor.get("tags"), Some(&json!([])));

    // The whole catalog serializes each tool's tags too.
    let listed = serde_json::to_value(&catalog).unwrap();
    let tags: Vec<_> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| (tool["name"].clone(), tool["tags"].clone()))
        .collect();
    assert_eq!(
        tags,
        [
            (json!("count_customers"), json!([])),
            (json!("get_customer"), json!(["pii", "crm", "eu-only"])),
        ]
    );
}

#[test]
fn builder_refuses_duplicates_too() {
    use toolwright::registry::Registration;
    let error = Catalog::builder()
        .add_registration(Registration::of::<shop::products::ListProductsArgs>())
        .add_registration(Registration::of::<legacy::ListProductsArgs>())
        .build()
        .unwrap_err();
    assert!(matches!(
        error.conflicts(),
        [Conflict::Key { key, .. }] if key == "products.list"
    ));
}

mod counted {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use toolwright::tool;

    /// How many times `Receipt`'s schema was generated.
    pub(crate) static RECEIPT_SCHEMAS: AtomicUsize = AtomicUsize::new(0);

    /// A result whose schema counts its own generation.
    #[derive(serde::Serialize)]
    pub(crate) struct Receipt {
        pub(crate) id: u64,
    }

    impl schemars::JsonSchema for Receipt {
        fn schema_name() -> std::borrow::Cow<'static, str> {
            "Receipt".into()
        }

        fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
            RECEIPT_SCHEMAS.fetch_add(1, Ordering::SeqCst);
            schemars::json_schema!({"type": "object", "properties": {"id": {"type": "integer"}}})
        }
    }

    /// Issue a receipt.
    #[tool(key = "receipts.issue", effect = read, authorize = public)]
    pub(crate) async fn issue_receipt(id: u64) -> Receipt {
        Receipt { id }
    }
}

#[test]
fn schemas_are_built_once_when_first_asked_for() {
    use std::sync::atomic::Ordering;

    let catalog = Catalog::discover_in(["catalog::counted"]).unwrap();
    let entry = catalog.get("issue_receipt").unwrap();
    // Discovery builds no schema; a provider export never needs this one.
    assert_eq!(counted::RECEIPT_SCHEMAS.load(Ordering::SeqCst), 0);
    assert_eq!(entry.input_schema()["required"], json!(["id"]));
    assert_eq!(counted::RECEIPT_SCHEMAS.load(Ordering::SeqCst), 0);

    assert_eq!(entry.output_schema().unwrap()["type"], "object");
    assert_eq!(entry.output_schema().unwrap()["title"], "Receipt");
    // Asked again, and through a clone of the catalog: the same schema.
    let copy = catalog.clone();
    assert!(copy.get("issue_receipt").unwrap().output_schema().is_some());
    assert_eq!(counted::RECEIPT_SCHEMAS.load(Ordering::SeqCst), 1);
}
