//! Just enough JSON to check a literal `input_schema` at compile time: the text parses (RFC 8259)
//! and its root is an object whose `type` is `"object"`. The macro crate depends on syn, quote and
//! proc-macro2 only, so this is a small hand-written reader; the runtime parses the schema again
//! with serde_json and checks it against the JSON Schema meta-schema.

/// `Ok` when `text` is a JSON object with `"type": "object"`; otherwise why not.
pub(crate) fn object_schema(text: &str) -> Result<(), String> {
    let mut reader = Reader {
        bytes: text.as_bytes(),
        pos: 0,
    };
    reader.space();
    if reader.peek() != Some(b'{') {
        reader.value()?;
        return Err("the root is not an object".to_owned());
    }
    let root_type = reader.object(true)?;
    reader.space();
    if reader.pos != reader.bytes.len() {
        return Err(reader.error("unexpected text after the root object"));
    }
    match root_type {
        Some(t) if t == "object" => Ok(()),
        Some(t) => Err(format!("the root's `type` is `{t}`")),
        None => Err("the root has no `type` string".to_owned()),
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn error(&self, what: &str) -> String {
        format!("invalid JSON at byte {}: {what}", self.pos)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), String> {
        self.space();
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(&format!("expected `{}`", byte as char)))
        }
    }

    fn value(&mut self) -> Result<(), String> {
        self.space();
        match self.peek() {
            Some(b'{') => self.object(false).map(drop),
            Some(b'[') => self.array(),
            Some(b'"') => self.string().map(drop),
            Some(b't') => self.word("true"),
            Some(b'f') => self.word("false"),
            Some(b'n') => self.word("null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.error("expected a value")),
        }
    }

    /// Reads an object; at the root, returns its `type` when that is a string.
    fn object(&mut self, root: bool) -> Result<Option<String>, String> {
        self.expect(b'{')?;
        let mut root_type = None;
        self.space();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(None);
        }
        loop {
            self.space();
            let key = self.string()?;
            self.expect(b':')?;
            self.space();
            if root && key == "type" && self.peek() == Some(b'"') {
                root_type = Some(self.string()?);
            } else {
                self.value()?;
            }
            self.space();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(root_type);
                }
                _ => return Err(self.error("expected `,` or `}`")),
            }
        }
    }

    fn array(&mut self) -> Result<(), String> {
        self.expect(b'[')?;
        self.space();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.value()?;
            self.space();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(self.error("expected `,` or `]`")),
            }
        }
    }

    /// Reads a string; escapes are checked, and kept as written in the result.
    fn string(&mut self) -> Result<String, String> {
        if self.peek() != Some(b'"') {
            return Err(self.error("expected a string"));
        }
        self.pos += 1;
        let start = self.pos;
        loop {
            match self.peek() {
                None => return Err(self.error("unterminated string")),
                Some(b'"') => break,
                Some(b'\\') => {
                    self.pos += 1;
                    match self.peek() {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                            self.pos += 1;
                        }
                        Some(b'u') => {
                            let hex = self.bytes.get(self.pos + 1..self.pos + 5);
                            if !hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                                return Err(self.error("`\\u` takes four hex digits"));
                            }
                            self.pos += 5;
                        }
                        _ => return Err(self.error("unknown escape")),
                    }
                }
                Some(c) if c < 0x20 => return Err(self.error("control character in a string")),
                Some(_) => self.pos += 1,
            }
        }
        let text = String::from_utf8_lossy(&self.bytes[start..self.pos]).into_owned();
        self.pos += 1;
        Ok(text)
    }

    fn word(&mut self, word: &str) -> Result<(), String> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(self.error("expected a value"))
        }
    }

    fn number(&mut self) -> Result<(), String> {
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.error("expected a digit")),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error("expected a digit after `.`"));
            }
            self.digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error("expected a digit in the exponent"));
            }
            self.digits();
        }
        Ok(())
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::object_schema;

    #[test]
    fn accepts_an_object_schema() {
        let text = r#"{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
            "properties": {"n": {"type": "number", "minimum": -1.5e3}, "s": {"enum": ["a\"b", "\u00e9", null, true]}},
            "additionalProperties": false}"#;
        assert_eq!(object_schema(text), Ok(()));
    }

    #[test]
    fn refuses_other_roots_and_bad_json() {
        assert_eq!(
            object_schema(r#"{"type": "array"}"#),
            Err("the root's `type` is `array`".to_owned())
        );
        assert_eq!(
            object_schema("[1]"),
            Err("the root is not an object".to_owned())
        );
        assert!(object_schema(r#"{"properties": {}}"#).is_err());
        assert!(object_schema(r#"{"type": "object",}"#).is_err());
        assert!(object_schema(r#"{"type": "object"} x"#).is_err());
        assert!(object_schema(r#"{"type": 'object'}"#).is_err());
    }
}
