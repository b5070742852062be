use toolwright::apps::UiResource;

toolwright::apps::ui_resource!(UiResource::new("https://example.com/board.html", "<p>"));

fn main() {}
