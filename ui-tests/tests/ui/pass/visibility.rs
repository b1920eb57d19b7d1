// The generated struct has the fn's visibility: `pub` tools are usable from other modules.
mod tools {
    use toolwright::tool;

    /// A public tool.
    #[tool(key = "demo.public", effect = read, authorize = public)]
    pub async fn public_tool(word: String) -> String {
        word
    }

    /// A crate-visible tool.
    #[tool(key = "demo.crate", effect = read, authorize = public)]
    pub(crate) async fn crate_tool(word: String) -> String {
        word
    }

    /// A private tool, used only here.
    #[tool(key = "demo.private", effect = read, authorize = public)]
    async fn private_tool(word: String) -> String {
        word
    }

    pub(crate) fn private_word() -> String {
        PrivateToolArgs {
            word: "hidden".to_owned(),
        }
        .word
    }
}

use toolwright::Tool;

fn main() {
    let public = tools::PublicToolArgs {
        word: "a".to_owned(),
    };
    let in_crate = tools::CrateToolArgs {
        word: "b".to_owned(),
    };
    assert_eq!(public.word, "a");
    assert_eq!(in_crate.word, "b");
    assert_eq!(tools::private_word(), "hidden");
    assert_eq!(<tools::PublicToolArgs as Tool>::KEY, "demo.public");
}
