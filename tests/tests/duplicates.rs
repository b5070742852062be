//! Two tools with one name: the registry refuses them, and the server will not start, with an
//! error that says where both are. (A binary of its own: `inventory` collects per binary.)

use toolwright::Server;
use toolwright::registry::Location;
use toolwright::registry::{Conflict, Origin, Registry};

mod first {
    /// The line of the `#[mcp_tool]` below.
    pub(crate) const LINE: u32 = line!() + 3;

    /// Look something up.
    #[toolwright::mcp_tool(name = "lookup")]
    fn lookup_by_key(
        /// The key.
        key: String,
    ) -> String {
        key
    }
}

mod second {
    /// The line of the `#[mcp_tool]` below.
    pub(crate) const LINE: u32 = line!() + 3;

    /// Look something up, elsewhere.
    #[toolwright::mcp_tool(name = "lookup")]
    fn lookup_by_id(
        /// The id.
        id: u64,
    ) -> u64 {
        id
    }
}

fn location(line: u32, module_path: &'static str) -> Location {
    Location {
        file: file!(),
        line,
        column: 5,
        module_path,
    }
}

fn expected_message() -> String {
    format!(
        "the tools cannot be served:\n  - two tools are named `lookup`: one at {file}:{}:5, one \
         at {file}:{}:5; rename one with `#[mcp_tool(name = \"...\")]`",
        first::LINE,
        second::LINE,
        file = file!(),
    )
}

#[test]
fn the_registry_refuses_two_tools_with_one_name() {
    let error = Registry::collect().expect_err("two tools are named `lookup`");
    assert_eq!(
        error.conflicts(),
        [Conflict::DuplicateName {
            name: "lookup".to_owned(),
            first: Origin::Linked(location(first::LINE, "duplicates::first")),
            second: Origin::Linked(location(second::LINE, "duplicates::second")),
        }]
    );
    assert_eq!(error.to_string(), expected_message());
}

#[tokio::test]
async fn the_server_will_not_start_and_says_why() {
    let error = Server::new("duplicates", "0.0.0")
        .serve(tokio::io::empty(), tokio::io::sink())
        .await
        .expect_err("the server refuses conflicting tools");
    assert!(matches!(error, toolwright::Error::Registry(_)), "{error:?}");
    assert_eq!(error.to_string(), expected_message());
}
