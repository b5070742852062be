//! Rate limits: `RateLimit` as a layer for every call and for some tools, per caller and per
//! tool, refusing with when to retry while other callers are served. (A binary of its own:
//! `inventory` collects per binary.)

use std::time::Duration;

use serde_json::json;
use toolwright::auth::Principal;
use toolwright::pipeline::{RATE_LIMITED, RateLimit, Select};
use toolwright::testing::TestClient;
use toolwright::{Context, Server, mcp_tool};

/// Say who calls, and from where.
#[mcp_tool]
fn whoami(ctx: &Context) -> String {
    let who = ctx
        .principal()
        .and_then(Principal::subject)
        .unwrap_or("nobody");
    match ctx.client_address() {
        Some(address) => format!("{who} at {address}"),
        None => who.to_owned(),
    }
}

/// Charge the card on file.
#[mcp_tool(destructive, tags = ["billing"])]
fn charge(cents: u64) -> String {
    format!("charged {cents}")
}

async fn as_user(server: Server, subject: &str) -> TestClient {
    let principal = Principal::new("https://as.example.com").with_subject(subject);
    server.test_client_as(principal).await.unwrap()
}

fn server() -> Server {
    Server::new("rate-limits", "0.0.1")
}

#[tokio::test]
async fn a_caller_past_its_limit_is_refused_with_when_to_retry_while_another_is_served() {
    let limit = RateLimit::per_caller(2, Duration::from_secs(60));
    let ada = as_user(server().layer(limit.clone()), "ada").await;
    let bob = as_user(server().layer(limit), "bob").await;
    for _ in 0..2 {
        assert_eq!(ada.call("whoami", json!({})).await.unwrap().text(), "ada");
    }
    let refused = ada.call("whoami", json!({})).await.unwrap_err();
    assert_eq!(refused.code, RATE_LIMITED);
    assert_eq!(
        refused.message,
        "rate limit reached: at most 2 calls every 1m for each caller; try again in 30s"
    );
    let data = refused.data.unwrap();
    let retry = data["retryAfterMs"].as_u64().unwrap();
    assert!((29_000..=30_000).contains(&retry), "{data}");
    assert_eq!(
        data["limit"],
        json!({"calls": 2, "periodMs": 60_000, "burst": 2, "perTool": false})
    );
    // Another caller has a budget of its own.
    assert_eq!(bob.call("whoami", json!({})).await.unwrap().text(), "bob");
}

#[tokio::test]
async fn a_limit_per_tool_counts_each_tool_apart() {
    let limit = RateLimit::per_caller(1, Duration::from_secs(3600)).per_tool();
    let ada = as_user(server().layer(limit), "ada").await;
    assert_eq!(ada.call("whoami", json!({})).await.unwrap().text(), "ada");
    let charged = ada.call("charge", json!({"cents": 5})).await.unwrap();
    assert_eq!(charged.text(), "charged 5");
    let refused = ada.call("charge", json!({"cents": 5})).await.unwrap_err();
    assert_eq!(
        refused.message,
        "rate limit reached: at most 1 call every 1h for each caller of `charge`; try again in \
         1h"
    );
}

#[tokio::test]
async fn a_limit_for_some_tools_leaves_the_others_alone() {
    let billing = RateLimit::per_caller(1, Duration::from_secs(60));
    let ada = as_user(
        server().layer_for(Select::tagged("billing"), billing),
        "ada",
    )
    .await;
    ada.call("charge", json!({"cents": 1})).await.unwrap();
    assert_eq!(
        ada.call("charge", json!({"cents": 1}))
            .await
            .unwrap_err()
            .code,
        RATE_LIMITED
    );
    for _ in 0..5 {
        ada.call("whoami", json!({})).await.unwrap();
    }
}

#[tokio::test]
async fn a_burst_is_spent_then_the_budget_comes_back_a_call_at_a_time() {
    // Ten calls a second, two at once: the third call at once waits a tenth of a second.
    let limit = RateLimit::per_caller(10, Duration::from_secs(1)).burst(2);
    let ada = as_user(server().layer(limit), "ada").await;
    ada.call("whoami", json!({})).await.unwrap();
    ada.call("whoami", json!({})).await.unwrap();
    let refused = ada.call("whoami", json!({})).await.unwrap_err();
    let retry = refused.data.unwrap()["retryAfterMs"].as_u64().unwrap();
    assert!(retry <= 100, "{retry}");
    tokio::time::sleep(Duration::from_millis(retry)).await;
    ada.call("whoami", json!({})).await.unwrap();
}
