//! The JSON Schema keywords toolwright enforces itself, with no feature: what a derived schema
//! says and what a literal one commonly states (types, `properties`, `required`,
//! `additionalProperties`, `enum`, `const`, ranges, lengths, `pattern`, items, `anyOf`, `oneOf`,
//! `allOf`, `not`, local `$ref`s). A schema that asks more (`if`, `dependentSchemas`,
//! `unevaluatedProperties`, ...) is not compiled here: the `validate` feature checks it with
//! jsonschema, and without that feature the server refuses to start rather than publish a
//! constraint it would not keep.
//!
//! `format` is an annotation in draft 2020-12 unless a schema opts into the format-assertion
//! vocabulary, so it is not asserted, as jsonschema does not assert it either.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt::Write as _;

use regex_lite::Regex;
use serde_json::{Map, Number, Value};

/// Keywords that constrain a value and that this validator does not enforce.
const UNSUPPORTED: &[&str] = &[
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "contains",
    "minContains",
    "maxContains",
    "unevaluatedProperties",
    "unevaluatedItems",
    "$dynamicRef",
    "$recursiveRef",
];

/// A schema compiled for checking values.
pub(crate) struct Validator {
    /// Every subschema; the root is the first. A `$ref` is an index into it, so a recursive
    /// schema is a cycle of indices.
    nodes: Vec<Node>,
}

type Id = usize;

/// One subschema's constraints.
#[derive(Default)]
struct Node {
    /// The `false` schema: nothing is valid.
    never: bool,
    types: Vec<Type>,
    properties: Vec<(String, Id)>,
    required: Vec<String>,
    /// `additionalProperties`: every property neither named nor matched by a pattern.
    additional: Option<Id>,
    pattern_properties: Vec<(Regex, Id)>,
    property_names: Option<Id>,
    min_properties: Option<u64>,
    max_properties: Option<u64>,
    prefix_items: Vec<Id>,
    /// The items after `prefix_items`.
    items: Option<Id>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    unique_items: bool,
    allowed: Option<Vec<Value>>,
    constant: Option<Value>,
    minimum: Option<Number>,
    maximum: Option<Number>,
    exclusive_minimum: Option<Number>,
    exclusive_maximum: Option<Number>,
    multiple_of: Option<Number>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    pattern: Option<(String, Regex)>,
    all_of: Vec<Id>,
    any_of: Vec<Id>,
    one_of: Vec<Id>,
    /// The values allowed by an `anyOf` or a `oneOf` whose branches are each one value (an enum
    /// whose variants are documented), for a message that lists them.
    constants: Option<Vec<Value>>,
    not: Option<(Id, Value)>,
    reference: Option<Id>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Type {
    Null,
    Boolean,
    Integer,
    Number,
    String,
    Array,
    Object,
}

impl Type {
    fn parse(name: &str) -> Option<Type> {
        Some(match name {
            "null" => Type::Null,
            "boolean" => Type::Boolean,
            "integer" => Type::Integer,
            "number" => Type::Number,
            "string" => Type::String,
            "array" => Type::Array,
            "object" => Type::Object,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Type::Null => "null",
            Type::Boolean => "boolean",
            Type::Integer => "integer",
            Type::Number => "number",
            Type::String => "string",
            Type::Array => "array",
            Type::Object => "object",
        }
    }

    /// Whether `value` is of this type; an integer is a number without a fractional part,
    /// `1.0` included, as JSON Schema counts it.
    fn admits(self, value: &Value) -> bool {
        match (self, value) {
            (Type::Null, Value::Null)
            | (Type::Boolean, Value::Bool(_))
            | (Type::Number, Value::Number(_))
            | (Type::String, Value::String(_))
            | (Type::Array, Value::Array(_))
            | (Type::Object, Value::Object(_)) => true,
            (Type::Integer, Value::Number(n)) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        }
    }
}

/// Why a schema cannot be compiled here: a keyword this validator does not enforce, or a value
/// it cannot read; `at` is where, as a JSON pointer into the schema.
#[derive(Debug, PartialEq)]
pub(crate) struct Unsupported {
    pub(crate) at: String,
    pub(crate) reason: String,
}

/// One way a value breaks the schema: where (a JSON pointer into the value) and what.
#[derive(Debug, PartialEq)]
pub(crate) struct Problem {
    pub(crate) at: String,
    pub(crate) what: What,
}

#[derive(Debug, PartialEq)]
pub(crate) enum What {
    /// A required member is missing.
    Missing(String),
    /// A member the object's schema does not allow, with the names it does.
    Unknown { name: String, expected: Vec<String> },
    /// Anything else, in words that begin with the value (`"abc" is not of type "integer"`).
    Said(String),
}

impl Validator {
    /// Compiles `schema`, or says what in it this validator does not enforce.
    pub(crate) fn new(schema: &Value) -> Result<Validator, Unsupported> {
        // Drafts 4 to 7 made `format` an assertion; 2019-09 and 2020-12 an annotation.
        let formats_assert = schema
            .get("$schema")
            .and_then(Value::as_str)
            .is_some_and(|dialect| {
                ["draft-04", "draft-06", "draft-07"]
                    .iter()
                    .any(|d| dialect.contains(d))
            });
        let mut compiler = Compiler {
            root: schema,
            nodes: Vec::new(),
            by_pointer: HashMap::new(),
            formats_assert,
        };
        compiler.compile(schema, String::new())?;
        Ok(Validator {
            nodes: compiler.nodes,
        })
    }

    /// Whether `value` is valid, without saying why not.
    pub(crate) fn is_valid(&self, value: &Value) -> bool {
        self.walk(0, value, &Path::Root, &mut None)
    }

    /// Every way `value` breaks the schema; empty when it is valid.
    pub(crate) fn problems(&self, value: &Value) -> Vec<Problem> {
        let mut problems = Vec::new();
        self.walk(0, value, &Path::Root, &mut Some(&mut problems));
        problems
    }

    /// Checks `value` against node `id`; records problems in `out` when it is given, and
    /// otherwise stops at the first.
    fn walk(
        &self,
        id: Id,
        value: &Value,
        path: &Path<'_>,
        out: &mut Option<&mut Vec<Problem>>,
    ) -> bool {
        let node = &self.nodes[id];
        let mut valid = true;
        // Records a problem, or ends the walk when nobody asks why.
        macro_rules! fail {
            ($what:expr) => {{
                valid = false;
                match out {
                    Some(problems) => problems.push(Problem {
                        at: path.pointer(),
                        what: $what,
                    }),
                    None => return false,
                }
            }};
        }
        if node.never {
            fail!(What::Said(format!("{} is not allowed", shown(value))));
            return valid;
        }
        if let Some(target) = node.reference
            && !self.walk(target, value, path, out)
        {
            valid = false;
            if out.is_none() {
                return false;
            }
        }
        if !node.types.is_empty() && !node.types.iter().any(|t| t.admits(value)) {
            fail!(What::Said(match node.types.as_slice() {
                [one] => format!(r#"{} is not of type "{}""#, shown(value), one.name()),
                many => {
                    let names: Vec<String> =
                        many.iter().map(|t| format!("\"{}\"", t.name())).collect();
                    format!("{} is not of types {}", shown(value), names.join(", "))
                }
            }));
            // The other keywords would only repeat it.
            return valid;
        }
        if let Some(allowed) = &node.allowed
            && !allowed.iter().any(|a| equal(a, value))
        {
            fail!(What::Said(format!(
                "{} is not one of {}",
                shown(value),
                listed(allowed)
            )));
        }
        if let Some(constant) = &node.constant
            && !equal(constant, value)
        {
            fail!(What::Said(format!("{constant} was expected")));
        }
        match value {
            Value::Number(n) => {
                let bounds = [
                    (&node.minimum, Ordering::Less, "less than the minimum"),
                    (&node.maximum, Ordering::Greater, "greater than the maximum"),
                ];
                for (bound, refused, words) in bounds {
                    if let Some(bound) = bound
                        && compare(n, bound) == refused
                    {
                        fail!(What::Said(format!("{n} is {words} of {bound}")));
                    }
                }
                if let Some(bound) = &node.exclusive_minimum
                    && compare(n, bound) != Ordering::Greater
                {
                    fail!(What::Said(format!(
                        "{n} is less than or equal to the minimum of {bound}"
                    )));
                }
                if let Some(bound) = &node.exclusive_maximum
                    && compare(n, bound) != Ordering::Less
                {
                    fail!(What::Said(format!(
                        "{n} is greater than or equal to the maximum of {bound}"
                    )));
                }
                if let Some(divisor) = &node.multiple_of
                    && !is_multiple(n, divisor)
                {
                    fail!(What::Said(format!("{n} is not a multiple of {divisor}")));
                }
            }
            Value::String(s) => {
                let length = || s.chars().count() as u64;
                if let Some(min) = node.min_length
                    && length() < min
                {
                    fail!(What::Said(format!(
                        "{} is shorter than {min} character{}",
                        shown(value),
                        plural(min)
                    )));
                }
                if let Some(max) = node.max_length
                    && length() > max
                {
                    fail!(What::Said(format!(
                        "{} is longer than {max} character{}",
                        shown(value),
                        plural(max)
                    )));
                }
                if let Some((source, regex)) = &node.pattern
                    && !regex.is_match(s)
                {
                    fail!(What::Said(format!(
                        r#"{} does not match "{source}""#,
                        shown(value)
                    )));
                }
            }
            Value::Array(items) => {
                let count = items.len() as u64;
                if let Some(min) = node.min_items
                    && count < min
                {
                    fail!(What::Said(format!(
                        "{} has less than {min} item{}",
                        shown(value),
                        plural(min)
                    )));
                }
                if let Some(max) = node.max_items
                    && count > max
                {
                    fail!(What::Said(format!(
                        "{} has more than {max} item{}",
                        shown(value),
                        plural(max)
                    )));
                }
                if node.unique_items
                    && items
                        .iter()
                        .enumerate()
                        .any(|(i, a)| items[i + 1..].iter().any(|b| equal(a, b)))
                {
                    fail!(What::Said(format!(
                        "{} has non-unique elements",
                        shown(value)
                    )));
                }
                for (index, item) in items.iter().enumerate() {
                    let schema = match node.prefix_items.get(index) {
                        Some(schema) => Some(*schema),
                        None => node.items,
                    };
                    if let Some(schema) = schema {
                        let path = Path::Index(path, index);
                        if !self.walk(schema, item, &path, out) {
                            valid = false;
                            if out.is_none() {
                                return false;
                            }
                        }
                    }
                }
            }
            Value::Object(members) => {
                for name in &node.required {
                    if !members.contains_key(name) {
                        fail!(What::Missing(name.clone()));
                    }
                }
                let count = members.len() as u64;
                if let Some(min) = node.min_properties
                    && count < min
                {
                    fail!(What::Said(format!(
                        "{} has less than {min} propert{}",
                        shown(value),
                        if min == 1 { "y" } else { "ies" }
                    )));
                }
                if let Some(max) = node.max_properties
                    && count > max
                {
                    fail!(What::Said(format!(
                        "{} has more than {max} propert{}",
                        shown(value),
                        if max == 1 { "y" } else { "ies" }
                    )));
                }
                if !self.members(node, members, path, out) {
                    valid = false;
                    if out.is_none() {
                        return false;
                    }
                }
            }
            Value::Null | Value::Bool(_) => {}
        }
        for &branch in &node.all_of {
            if !self.walk(branch, value, path, out) {
                valid = false;
                if out.is_none() {
                    return false;
                }
            }
        }
        if !node.any_of.is_empty() && !node.any_of.iter().any(|&b| self.is_valid_at(b, value)) {
            valid = false;
            if !self.alternatives(node, &node.any_of, "anyOf", value, path, out) {
                return false;
            }
        }
        if !node.one_of.is_empty() {
            let matching = node
                .one_of
                .iter()
                .filter(|&&b| self.is_valid_at(b, value))
                .count();
            if matching == 0 {
                valid = false;
                if !self.alternatives(node, &node.one_of, "oneOf", value, path, out) {
                    return false;
                }
            } else if matching > 1 {
                fail!(What::Said(format!(
                    "{} is valid under more than one of the schemas listed in the 'oneOf' keyword",
                    shown(value)
                )));
            }
        }
        if let Some((not, schema)) = &node.not
            && self.is_valid_at(*not, value)
        {
            fail!(What::Said(format!(
                "{schema} is not allowed for {}",
                shown(value)
            )));
        }
        valid
    }

    fn is_valid_at(&self, id: Id, value: &Value) -> bool {
        self.walk(id, value, &Path::Root, &mut None)
    }

    /// Checks an object's members against `properties`, `patternProperties`,
    /// `additionalProperties` and `propertyNames`.
    fn members(
        &self,
        node: &Node,
        members: &Map<String, Value>,
        path: &Path<'_>,
        out: &mut Option<&mut Vec<Problem>>,
    ) -> bool {
        let mut valid = true;
        for (name, member) in members {
            let here = Path::Key(path, name);
            if let Some(names) = node.property_names
                && !self.walk(names, &Value::String(name.clone()), path, out)
            {
                valid = false;
                if out.is_none() {
                    return false;
                }
            }
            let mut matched = false;
            if let Some((_, schema)) = node.properties.iter().find(|(n, _)| n == name) {
                matched = true;
                if !self.walk(*schema, member, &here, out) {
                    valid = false;
                    if out.is_none() {
                        return false;
                    }
                }
            }
            for (regex, schema) in &node.pattern_properties {
                if regex.is_match(name) {
                    matched = true;
                    if !self.walk(*schema, member, &here, out) {
                        valid = false;
                        if out.is_none() {
                            return false;
                        }
                    }
                }
            }
            let Some(additional) = node.additional.filter(|_| !matched) else {
                continue;
            };
            if self.nodes[additional].never && node.pattern_properties.is_empty() {
                // A closed object: say which names it takes.
                valid = false;
                match out {
                    Some(problems) => problems.push(Problem {
                        at: path.pointer(),
                        what: What::Unknown {
                            name: name.clone(),
                            expected: node.properties.iter().map(|(n, _)| n.clone()).collect(),
                        },
                    }),
                    None => return false,
                }
            } else if !self.walk(additional, member, &here, out) {
                valid = false;
                if out.is_none() {
                    return false;
                }
            }
        }
        valid
    }

    /// Says why no branch of an `anyOf` or `oneOf` takes `value`: the values allowed, when each
    /// branch is one; the problems of the one branch of the value's type, when only one is (an
    /// `Option` of a struct is an object or `null`), so the message reaches the member at
    /// fault; or that no branch matched. Returns `false` when nobody asks why.
    fn alternatives(
        &self,
        node: &Node,
        branches: &[Id],
        keyword: &str,
        value: &Value,
        path: &Path<'_>,
        out: &mut Option<&mut Vec<Problem>>,
    ) -> bool {
        let Some(problems) = out else {
            return false;
        };
        if let Some(allowed) = &node.constants {
            problems.push(Problem {
                at: path.pointer(),
                what: What::Said(format!(
                    "{} is not one of {}",
                    shown(value),
                    listed(allowed)
                )),
            });
            return true;
        }
        let typed: Vec<Id> = branches
            .iter()
            .copied()
            .filter(|&b| self.admits_type(b, value))
            .collect();
        if let [branch] = typed.as_slice() {
            self.walk(*branch, value, path, out);
        } else {
            problems.push(Problem {
                at: path.pointer(),
                what: What::Said(format!(
                    "{} is not valid under any of the schemas listed in the '{keyword}' keyword",
                    shown(value)
                )),
            });
        }
        true
    }

    /// Whether node `id` (through its `$ref`) admits the value's JSON type.
    fn admits_type(&self, id: Id, value: &Value) -> bool {
        let node = &self.nodes[id];
        if node.never {
            return false;
        }
        if let Some(target) = node.reference
            && !self.admits_type(target, value)
        {
            return false;
        }
        node.types.is_empty() || node.types.iter().any(|t| t.admits(value))
    }
}

/// Where a value is, built on the stack as the walk goes down and written out only for a problem.
enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl Path<'_> {
    /// As a JSON pointer: `/tags/0/name`.
    fn pointer(&self) -> String {
        let mut pointer = String::new();
        self.write(&mut pointer);
        pointer
    }

    fn write(&self, out: &mut String) {
        match self {
            Path::Root => {}
            Path::Key(parent, key) => {
                parent.write(out);
                out.push('/');
                out.push_str(&key.replace('~', "~0").replace('/', "~1"));
            }
            Path::Index(parent, index) => {
                parent.write(out);
                let _ = write!(out, "/{index}");
            }
        }
    }
}

struct Compiler<'a> {
    root: &'a Value,
    nodes: Vec<Node>,
    /// The node compiled for each place in the schema, so that a `$ref` to it reuses it and a
    /// recursive schema ends.
    by_pointer: HashMap<String, Id>,
    /// Whether the schema's dialect makes `format` an assertion.
    formats_assert: bool,
}

impl Compiler<'_> {
    /// Compiles the subschema at `pointer` (a JSON pointer into the root schema).
    fn compile(&mut self, schema: &Value, pointer: String) -> Result<Id, Unsupported> {
        if let Some(id) = self.by_pointer.get(&pointer) {
            return Ok(*id);
        }
        let id = self.nodes.len();
        self.nodes.push(Node::default());
        self.by_pointer.insert(pointer.clone(), id);
        let node = self.node(schema, &pointer)?;
        self.nodes[id] = node;
        Ok(id)
    }

    fn node(&mut self, schema: &Value, pointer: &str) -> Result<Node, Unsupported> {
        let unsupported = |at: String, reason: String| Unsupported { at, reason };
        let object = match schema {
            Value::Bool(true) => return Ok(Node::default()),
            Value::Bool(false) => {
                return Ok(Node {
                    never: true,
                    ..Node::default()
                });
            }
            Value::Object(object) => object,
            _ => {
                return Err(unsupported(
                    pointer.to_owned(),
                    "a schema is an object or a boolean".to_owned(),
                ));
            }
        };
        let mut node = Node::default();
        // The place of keyword `key`, and of its `i`th part.
        let at = |key: &str| format!("{pointer}/{}", key.replace('~', "~0").replace('/', "~1"));
        for (key, value) in object {
            let here = at(key);
            let bad =
                |what: &str| Err(unsupported(here.clone(), format!("`{key}` must be {what}")));
            match key.as_str() {
                "type" => {
                    let names: Vec<&Value> = match value {
                        Value::Array(names) => names.iter().collect(),
                        one => vec![one],
                    };
                    for name in names {
                        match name.as_str().and_then(Type::parse) {
                            Some(t) => node.types.push(t),
                            None => return bad("a JSON type or a list of them"),
                        }
                    }
                }
                "properties" | "patternProperties" => {
                    let Value::Object(schemas) = value else {
                        return bad("an object of schemas");
                    };
                    for (name, schema) in schemas {
                        let pointer =
                            format!("{here}/{}", name.replace('~', "~0").replace('/', "~1"));
                        let id = self.compile(schema, pointer.clone())?;
                        if key == "properties" {
                            node.properties.push((name.clone(), id));
                        } else {
                            node.pattern_properties.push((regex(name, &pointer)?, id));
                        }
                    }
                }
                "required" => {
                    let Some(names) = value.as_array().and_then(|names| {
                        names.iter().map(Value::as_str).collect::<Option<Vec<_>>>()
                    }) else {
                        return bad("a list of names");
                    };
                    node.required = names.into_iter().map(str::to_owned).collect();
                }
                "additionalProperties" => node.additional = Some(self.compile(value, here)?),
                "propertyNames" => node.property_names = Some(self.compile(value, here)?),
                "prefixItems" => node.prefix_items = self.list(value, &here)?,
                // Before 2020-12 a list of `items` was what `prefixItems` is now, and
                // `additionalItems` the rest.
                "items" if value.is_array() => node.prefix_items = self.list(value, &here)?,
                "items" => node.items = Some(self.compile(value, here)?),
                "additionalItems" if object.get("items").is_some_and(Value::is_array) => {
                    node.items = Some(self.compile(value, here)?);
                }
                "enum" => {
                    let Value::Array(values) = value else {
                        return bad("a list of values");
                    };
                    node.allowed = Some(values.clone());
                }
                "const" => node.constant = Some(value.clone()),
                "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf" => {
                    let Value::Number(n) = value else {
                        return bad("a number");
                    };
                    let n = Some(n.clone());
                    match key.as_str() {
                        "minimum" => node.minimum = n,
                        "maximum" => node.maximum = n,
                        "exclusiveMinimum" => node.exclusive_minimum = n,
                        "exclusiveMaximum" => node.exclusive_maximum = n,
                        _ => node.multiple_of = n,
                    }
                }
                "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties"
                | "maxProperties" => {
                    let Some(n) = value.as_u64() else {
                        return bad("a non-negative integer");
                    };
                    let n = Some(n);
                    match key.as_str() {
                        "minLength" => node.min_length = n,
                        "maxLength" => node.max_length = n,
                        "minItems" => node.min_items = n,
                        "maxItems" => node.max_items = n,
                        "minProperties" => node.min_properties = n,
                        _ => node.max_properties = n,
                    }
                }
                "uniqueItems" => node.unique_items = value.as_bool() == Some(true),
                "pattern" => {
                    let Some(source) = value.as_str() else {
                        return bad("a regular expression");
                    };
                    node.pattern = Some((source.to_owned(), regex(source, &here)?));
                }
                "allOf" => node.all_of = self.list(value, &here)?,
                "anyOf" | "oneOf" => {
                    let branches = self.list(value, &here)?;
                    node.constants = constants(value);
                    if key == "anyOf" {
                        node.any_of = branches;
                    } else {
                        node.one_of = branches;
                    }
                }
                "not" => node.not = Some((self.compile(value, here)?, value.clone())),
                "$ref" => {
                    let Some(reference) = value.as_str() else {
                        return bad("a string");
                    };
                    node.reference = Some(self.reference(reference, &here)?);
                }
                // Where subschemas wait for a `$ref`: compiled when one reaches them.
                "$defs" | "definitions" => {}
                "format" if self.formats_assert => {
                    return Err(unsupported(
                        here,
                        "`format` is an assertion in the dialect the schema's `$schema` names, \
                         and is checked only with toolwright's `validate` feature"
                            .to_owned(),
                    ));
                }
                _ if UNSUPPORTED.contains(&key.as_str()) => {
                    return Err(unsupported(
                        here,
                        format!("`{key}` is checked only with toolwright's `validate` feature"),
                    ));
                }
                // Annotations (`description`, `title`, `default`, `format`, ...) and keywords
                // JSON Schema does not define, which constrain nothing.
                _ => {}
            }
        }
        Ok(node)
    }

    /// Compiles a list of subschemas.
    fn list(&mut self, value: &Value, pointer: &str) -> Result<Vec<Id>, Unsupported> {
        let Value::Array(schemas) = value else {
            return Err(Unsupported {
                at: pointer.to_owned(),
                reason: "a list of schemas was expected".to_owned(),
            });
        };
        schemas
            .iter()
            .enumerate()
            .map(|(i, schema)| self.compile(schema, format!("{pointer}/{i}")))
            .collect()
    }

    /// The node a `$ref` names: a place in this schema (`#`, `#/$defs/Item`).
    fn reference(&mut self, reference: &str, at: &str) -> Result<Id, Unsupported> {
        let target = reference
            .strip_prefix('#')
            .filter(|pointer| pointer.is_empty() || pointer.starts_with('/'))
            .and_then(|pointer| {
                // A pointer in a URI fragment may be percent-encoded; the schemas toolwright
                // meets do not, and a `%` stays as it is.
                self.root.pointer(pointer).map(|schema| (pointer, schema))
            });
        let Some((pointer, schema)) = target else {
            return Err(Unsupported {
                at: at.to_owned(),
                reason: format!(
                    "`$ref` to `{reference}`, which is not a place in this schema, is checked \
                     only with toolwright's `validate` feature"
                ),
            });
        };
        self.compile(schema, pointer.to_owned())
    }
}

/// The first keyword of `schema` that [`Validator::new`] would refuse as one it does not enforce
/// (a keyword of [`UNSUPPORTED`], a `$ref` out of the schema), found without compiling: what a
/// release build checks of a derived schema at start, whose compiling waits for its first call.
/// A value it cannot read (a `pattern` that does not compile, say) is found by compiling, as
/// debug builds do at start.
pub(crate) fn first_unsupported(schema: &Value) -> Option<Unsupported> {
    /// Where the walk is: the tokens of a JSON pointer.
    type Path<'a> = Vec<Cow<'a, str>>;
    fn found(path: &Path<'_>, reason: String) -> Option<Unsupported> {
        let mut at = String::new();
        for token in path {
            at.push('/');
            at.push_str(&token.replace('~', "~0").replace('/', "~1"));
        }
        Some(Unsupported { at, reason })
    }
    fn walk<'a>(schema: &'a Value, path: &mut Path<'a>) -> Option<Unsupported> {
        let Value::Object(object) = schema else {
            return None;
        };
        for (key, value) in object {
            path.push(Cow::Borrowed(key));
            let result = match key.as_str() {
                _ if UNSUPPORTED.contains(&key.as_str()) => found(
                    path,
                    format!("`{key}` is checked only with toolwright's `validate` feature"),
                ),
                "$ref" => match value.as_str() {
                    Some(reference) if !reference.starts_with('#') => found(
                        path,
                        format!(
                            "`$ref` to `{reference}`, which is not a place in this schema, is \
                             checked only with toolwright's `validate` feature"
                        ),
                    ),
                    _ => None,
                },
                // Values, not schemas.
                "enum" | "const" | "default" | "examples" => None,
                "properties" | "patternProperties" | "$defs" | "definitions" => {
                    value.as_object().and_then(|schemas| {
                        schemas.iter().find_map(|(name, schema)| {
                            path.push(Cow::Borrowed(name));
                            let result = walk(schema, path);
                            path.pop();
                            result
                        })
                    })
                }
                _ => match value {
                    Value::Array(schemas) => schemas.iter().enumerate().find_map(|(i, schema)| {
                        if !schema.is_object() {
                            return None;
                        }
                        path.push(Cow::Owned(i.to_string()));
                        let result = walk(schema, path);
                        path.pop();
                        result
                    }),
                    schema => walk(schema, path),
                },
            };
            path.pop();
            if result.is_some() {
                return result;
            }
        }
        None
    }
    walk(schema, &mut Vec::new())
}

/// A `pattern` or a `patternProperties` name as a regular expression.
fn regex(source: &str, at: &str) -> Result<Regex, Unsupported> {
    Regex::new(source).map_err(|error| Unsupported {
        at: at.to_owned(),
        reason: format!("the regular expression `{source}` does not compile: {error}"),
    })
}

/// The values of an `anyOf` or `oneOf` whose branches are each one value (`const`, or an `enum`
/// of one), as schemars writes an enum whose variants carry doc comments.
fn constants(branches: &Value) -> Option<Vec<Value>> {
    branches
        .as_array()?
        .iter()
        .map(|branch| match (branch.get("const"), branch.get("enum")) {
            (Some(value), _) => Some(value.clone()),
            (None, Some(Value::Array(one))) if one.len() == 1 => Some(one[0].clone()),
            _ => None,
        })
        .collect::<Option<Vec<Value>>>()
        .filter(|values| !values.is_empty())
}

/// Values for a message: `"a", "b" or "c"`.
pub(crate) fn listed(values: &[Value]) -> String {
    let values: Vec<String> = values.iter().map(Value::to_string).collect();
    match values.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// A value the client sent, for a message: as JSON, cut short past 40 characters.
pub(crate) fn shown(value: &Value) -> String {
    const MAX: usize = 40;
    let text = value.to_string();
    match text.char_indices().nth(MAX) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text,
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Two numbers in order: exactly when both are integers, as floats otherwise.
fn compare(a: &Number, b: &Number) -> Ordering {
    match (integer(a), integer(b)) {
        (Some(a), Some(b)) => a.cmp(&b),
        _ => {
            let (a, b) = (
                a.as_f64().unwrap_or(f64::NAN),
                b.as_f64().unwrap_or(f64::NAN),
            );
            a.partial_cmp(&b).unwrap_or(Ordering::Equal)
        }
    }
}

/// A number as an integer, when it is one (`2.0` included).
fn integer(n: &Number) -> Option<i128> {
    if let Some(i) = n.as_i64() {
        return Some(i128::from(i));
    }
    if let Some(u) = n.as_u64() {
        return Some(i128::from(u));
    }
    let f = n.as_f64()?;
    (f.fract() == 0.0 && f.abs() < 1e18).then_some(f as i128)
}

fn is_multiple(n: &Number, divisor: &Number) -> bool {
    if let (Some(n), Some(d)) = (integer(n), integer(divisor))
        && d != 0
    {
        return n % d == 0;
    }
    let (n, d) = (n.as_f64().unwrap_or(0.0), divisor.as_f64().unwrap_or(1.0));
    let quotient = n / d;
    (quotient - quotient.round()).abs() <= 1e-9 * quotient.abs().max(1.0)
}

/// JSON equality, numbers compared by value (`1` equals `1.0`), as JSON Schema compares them.
fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => compare(a, b) == Ordering::Equal,
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| equal(a, b))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_recursive_schema_compiles_and_checks_every_level() {
        let tree = json!({
            "type": "object",
            "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#"}}},
            "required": ["name"]
        });
        let validator = Validator::new(&tree).unwrap();
        assert!(
            validator.is_valid(&json!({"name": "a", "children": [{"name": "b", "children": []}]}))
        );
        assert_eq!(
            validator.problems(&json!({"name": "a", "children": [{"children": [{"name": 1}]}]})),
            [
                Problem {
                    at: "/children/0".to_owned(),
                    what: What::Missing("name".to_owned())
                },
                Problem {
                    at: "/children/0/children/0/name".to_owned(),
                    what: What::Said("1 is not of type \"string\"".to_owned())
                },
            ]
        );
    }

    #[test]
    fn numbers_compare_by_value_and_integers_exactly() {
        let validator = Validator::new(&json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "maximum": u64::MAX},
                "e": {"enum": [1, "one"]},
                "m": {"multipleOf": 0.1}
            }
        }))
        .unwrap();
        assert!(validator.is_valid(&json!({"n": u64::MAX, "e": 1.0, "m": 0.3})));
        assert!(validator.is_valid(&json!({"n": 2.0})));
        assert!(!validator.is_valid(&json!({"n": 2.5})));
        assert!(!validator.is_valid(&json!({"n": -1, "m": 0.25})));
    }

    #[test]
    fn what_it_does_not_enforce_is_said_with_its_place() {
        let refused = |schema: Value| Validator::new(&schema).err().unwrap();
        assert_eq!(
            refused(json!({"properties": {"a": {"dependentRequired": {"a": ["b"]}}}})),
            Unsupported {
                at: "/properties/a/dependentRequired".to_owned(),
                reason: "`dependentRequired` is checked only with toolwright's `validate` feature"
                    .to_owned()
            }
        );
        assert_eq!(
            refused(json!({"properties": {"a": {"pattern": "(unclosed"}}})).at,
            "/properties/a/pattern"
        );
        // Found without compiling, at the same place.
        for schema in [
            json!({"properties": {"a": {"dependentRequired": {"a": ["b"]}}}}),
            json!({"anyOf": [{"type": "null"}, {"items": {"if": {}}}]}),
            json!({"properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": {"$ref": "https://example.com/a"}}}),
        ] {
            assert_eq!(
                first_unsupported(&schema),
                Validator::new(&schema).err(),
                "{schema}"
            );
        }
        assert_eq!(
            first_unsupported(&json!({"properties": {"if": {"enum": ["if"]}}})),
            None
        );
        // `format` asserts in draft 7, and is an annotation in 2020-12.
        let email = json!({"properties": {"to": {"type": "string", "format": "email"}}});
        assert!(Validator::new(&email).is_ok());
        let mut draft7 = email.clone();
        draft7["$schema"] = json!("http://json-schema.org/draft-07/schema#");
        assert_eq!(refused(draft7).at, "/properties/to/format");
    }
}
