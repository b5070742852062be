use toolwright::mcp_tool;

/// The answer.
#[mcp_tool(
    name = "the_answer_to_the_ultimate_question_of_life_the_universe_and_everything_as_computed_by_deep_thought_over_seven_and_a_half_million_years"
)]
fn answer() -> u32 {
    42
}

fn main() {}
