use toolwright::apps::UiResource;

toolwright::apps::ui_resource!(
    UiResource::new("ui://board/view.html", "<p>").connect_domains(&["api.example.com"])
);

fn main() {}
