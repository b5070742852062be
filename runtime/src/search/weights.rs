//! The ranking's weights, in one place: how much each part of a tool counts, how quickly
//! repeated matches saturate, what a prefix and the name's words add.

/// The parts of a tool that a query is matched against, each with its own weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Field {
    Name,
    Title,
    Description,
    Tags,
    ArgumentNames,
    ArgumentDescriptions,
    Initials,
}

pub(super) const FIELDS: [Field; 7] = [
    Field::Name,
    Field::Title,
    Field::Description,
    Field::Tags,
    Field::ArgumentNames,
    Field::ArgumentDescriptions,
    Field::Initials,
];

impl Field {
    /// How much one occurrence of a word in this field counts, before length normalisation.
    /// The tags are words chosen to be found; a name's words are too, but a generic verb
    /// (`get`, `read`) in it should not outweigh several words of the description, so it counts
    /// as much as the description and the query's cover of the name adds the rest; a title
    /// mostly repeats the name; arguments say how a tool is called more than what it does.
    pub(super) fn weight(self) -> f64 {
        match self {
            Field::Tags => 3.0,
            Field::Name | Field::Description => 2.0,
            Field::Title => 1.5,
            Field::ArgumentNames | Field::Initials => 1.0,
            Field::ArgumentDescriptions => 0.5,
        }
    }

    /// How much a field's length lowers its words' weight (BM25's `b`). Names and tags are a
    /// few words each, so their lengths say little about how much a word matters.
    pub(super) fn length_normalisation(self) -> f64 {
        match self {
            Field::Name | Field::Title => 0.5,
            Field::Tags => 0.3,
            Field::Initials => 0.0,
            Field::Description | Field::ArgumentNames | Field::ArgumentDescriptions => 0.75,
        }
    }
}

/// How quickly repeated matches stop adding to a tool's score (BM25's `k1`).
pub(super) const SATURATION: f64 = 1.2;

/// How much a word that merely starts with a query term counts, against a whole-word match.
pub(super) const PREFIX_WEIGHT: f64 = 0.3;

/// How much a tool's score grows when the query holds every word of its name (in proportion
/// for some of them): `create slack channel` means `create_channel` more than `slack_upload_file`.
pub(super) const NAME_COVERAGE: f64 = 0.2;

/// How much more a tool's score grows when the query holds its whole name: `tag note` is
/// `tag_note`, however often another tool says `tag`.
/// Chosen on the evaluation set without tags: from 0.1 up, keyword recall@1 rises (0.924 to
/// 0.931) and nothing falls; past 0.2 the real servers' set loses paraphrases.
pub(super) const WHOLE_NAME: f64 = 0.15;

/// What a tool's score is multiplied by when the query holds `coverage` of its name's words,
/// and each of them as a whole word when `whole`.
pub(super) fn name_bonus(coverage: f64, whole: bool) -> f64 {
    let whole = if whole { WHOLE_NAME } else { 0.0 };
    1.0 + NAME_COVERAGE * coverage + whole
}

/// A query term of this many characters or more also matches the start of longer words.
pub(super) const PREFIX_MIN_CHARS: usize = 3;

/// BM25's inverse document frequency: how rare a word that `matched` of `all` tools hold is.
pub(super) fn rarity(all: usize, matched: usize) -> f64 {
    let (all, matched) = (all as f64, matched as f64);
    (1.0 + (all - matched + 0.5) / (matched + 0.5)).ln()
}
