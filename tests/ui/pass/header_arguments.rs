use toolwright::mcp_tool;

/// Forecast a region's weather, some days ahead.
#[mcp_tool]
fn forecast(
    #[arg(header = "Region")] region: &str,
    #[arg(header = "Days")] days: Option<u8>,
    #[arg(header = "Metric")] metric: bool,
) -> String {
    format!("{region} {days:?} {metric}")
}

fn main() {}
