use toolwright::mcp_tool;

/// Forecast a region's weather.
#[mcp_tool]
fn forecast(
    #[arg(header = "Region")] region: String,
    #[arg(header = "region")] area: String,
) -> String {
    format!("{region} {area}")
}

fn main() {}
