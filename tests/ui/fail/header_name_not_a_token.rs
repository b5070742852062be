use toolwright::mcp_tool;

/// Forecast a region's weather.
#[mcp_tool]
fn forecast(#[arg(header = "Region Name")] region: String) -> String {
    region
}

fn main() {}
