//! URI templates (RFC 6570) for resource templates: the subset a server can
//! match a requested URI against unambiguously, `{var}` (one path segment)
//! and `{+var}` (the rest, slashes included), and the matching itself.
//!
//! RFC 6570 defines expansion only; matching is ours. Templates that could
//! match one URI in several ways (two variables side by side, two
//! multi-segment variables) are refused when the server starts, so every
//! match is unique and the scan stays linear in practice.

/// The longest URI matched against templates, in bytes.
pub const MAX_URI_BYTES: usize = 8192;

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Literal(String),
    /// `{name}`: one or more characters up to the next `/`, `?` or `#`.
    Segment(String),
    /// `{+name}`: one or more characters of any kind.
    Rest(String),
}

/// A parsed template.
#[derive(Debug, Clone, PartialEq)]
pub struct UriTemplate {
    text: String,
    parts: Vec<Part>,
}

/// Why a requested URI did not match, for the client.
#[derive(Debug, Clone, PartialEq)]
pub enum MatchError {
    /// The URI has another shape: the template does not apply.
    NoMatch,
    /// It matched, but a variable's value is unsafe to hand over
    /// (a `..` segment, an absolute path, a NUL, bad percent-encoding).
    Unsafe { variable: String, reason: String },
}

impl UriTemplate {
    /// Parses `text`; the error says what is wrong, for the user who wrote it.
    pub fn parse(text: &str) -> Result<UriTemplate, String> {
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_string()));
            }
            let Some(close) = rest[open..].find('}') else {
                return Err(format!("URI template \"{text}\" has a `{{` without `}}`"));
            };
            parts.push(parse_expression(text, &rest[open + 1..open + close])?);
            rest = &rest[open + close + 1..];
        }
        if rest.contains('}') {
            return Err(format!("URI template \"{text}\" has a `}}` without `{{`"));
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_string()));
        }
        check_unambiguous(text, &parts)?;
        Ok(UriTemplate {
            text: text.to_string(),
            parts,
        })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The variables' names, in order.
    pub fn variables(&self) -> Vec<&str> {
        self.parts
            .iter()
            .filter_map(|p| match p {
                Part::Segment(name) | Part::Rest(name) => Some(name.as_str()),
                Part::Literal(_) => None,
            })
            .collect()
    }

    /// The variables of `uri`, percent-decoded, in template order.
    pub fn match_uri(&self, uri: &str) -> Result<Vec<(String, String)>, MatchError> {
        if uri.len() > MAX_URI_BYTES {
            return Err(MatchError::NoMatch);
        }
        let mut raw = Vec::new();
        if !match_parts(&self.parts, uri, &mut raw) {
            return Err(MatchError::NoMatch);
        }
        raw.into_iter()
            .map(|(name, value)| {
                let decoded = percent_decode(value).map_err(|reason| MatchError::Unsafe {
                    variable: name.to_string(),
                    reason,
                })?;
                check_safe(&decoded).map_err(|reason| MatchError::Unsafe {
                    variable: name.to_string(),
                    reason,
                })?;
                Ok((name.to_string(), decoded))
            })
            .collect()
    }
}

fn parse_expression(template: &str, inner: &str) -> Result<Part, String> {
    let (rest, name) = match inner.strip_prefix('+') {
        Some(name) => (true, name),
        None => (false, inner),
    };
    let valid = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    if !valid {
        return Err(format!(
            "URI template \"{template}\": `{{{inner}}}` is not supported; use `{{name}}` for one \
             path segment or `{{+name}}` for the rest of the URI, where name is letters, digits \
             and `_`, not starting with a digit"
        ));
    }
    Ok(if rest {
        Part::Rest(name.to_string())
    } else {
        Part::Segment(name.to_string())
    })
}

fn check_unambiguous(template: &str, parts: &[Part]) -> Result<(), String> {
    let mut seen: Vec<&str> = Vec::new();
    let mut rests = 0;
    let mut previous_was_variable = false;
    for part in parts {
        let name = match part {
            Part::Literal(_) => {
                previous_was_variable = false;
                continue;
            }
            Part::Segment(name) => name,
            Part::Rest(name) => {
                rests += 1;
                name
            }
        };
        if previous_was_variable {
            return Err(format!(
                "URI template \"{template}\": variables must be separated by text, or a URI \
                 could match them in several ways"
            ));
        }
        if seen.contains(&name.as_str()) {
            return Err(format!(
                "URI template \"{template}\": the variable `{name}` appears twice"
            ));
        }
        seen.push(name);
        previous_was_variable = true;
    }
    if rests > 1 {
        return Err(format!(
            "URI template \"{template}\": at most one `{{+name}}` variable, or a URI could match \
             it in several ways"
        ));
    }
    Ok(())
}

/// Matches `uri` against `parts`, collecting the raw variable values. A
/// variable extends to the first place where the rest matches; with the
/// rules `parse` enforces, at most one split succeeds.
fn match_parts<'p, 'u>(
    parts: &'p [Part],
    uri: &'u str,
    values: &mut Vec<(&'p str, &'u str)>,
) -> bool {
    let Some((first, rest)) = parts.split_first() else {
        return uri.is_empty();
    };
    match first {
        Part::Literal(text) => uri
            .strip_prefix(text.as_str())
            .is_some_and(|after| match_parts(rest, after, values)),
        Part::Segment(name) | Part::Rest(name) => {
            let multi = matches!(first, Part::Rest(_));
            let limit = if multi {
                uri.len()
            } else {
                uri.find(['/', '?', '#']).unwrap_or(uri.len())
            };
            // Where the value may end: after at least one character, and
            // where the next literal begins (or at the end).
            let ends: Vec<usize> = match rest.first() {
                None => vec![limit],
                Some(Part::Literal(next)) => uri
                    .match_indices(next.as_str())
                    .map(|(i, _)| i)
                    .take_while(|&i| i <= limit)
                    .collect(),
                Some(_) => Vec::new(),
            };
            for end in ends.into_iter().filter(|&e| e > 0) {
                let mark = values.len();
                values.push((name.as_str(), &uri[..end]));
                if match_parts(rest, &uri[end..], values) {
                    return true;
                }
                values.truncate(mark);
            }
            false
        }
    }
}

fn percent_decode(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            match hex {
                Some(byte) => out.push(byte),
                None => return Err("it has a `%` not followed by two hex digits".into()),
            }
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "it decodes to bytes that are not UTF-8".into())
}

/// Values end up as R arguments, often file paths: refuse what could step
/// outside the place the template points into.
fn check_safe(value: &str) -> Result<(), String> {
    if value.contains('\0') {
        return Err("it contains a NUL character".into());
    }
    if value.split(['/', '\\']).any(|segment| segment == "..") {
        return Err("it contains a `..` segment".into());
    }
    let bytes = value.as_bytes();
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    if value.starts_with('/') || value.starts_with('\\') || drive {
        return Err("it is an absolute path".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(template: &str, uri: &str) -> Result<Vec<(String, String)>, MatchError> {
        UriTemplate::parse(template).unwrap().match_uri(uri)
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn segments_and_rests_match() {
        assert_eq!(
            vars("test://template/{id}/data", "test://template/123/data"),
            Ok(pairs(&[("id", "123")]))
        );
        assert_eq!(
            vars("file:///{+path}", "file:///a/b/c.csv"),
            Ok(pairs(&[("path", "a/b/c.csv")]))
        );
        assert_eq!(
            vars("db://{table}/rows/{+query}", "db://mtcars/rows/cyl=4/x"),
            Ok(pairs(&[("table", "mtcars"), ("query", "cyl=4/x")]))
        );
        assert_eq!(
            vars("data://{name}.csv", "data://iris.csv"),
            Ok(pairs(&[("name", "iris")]))
        );
    }

    #[test]
    fn other_shapes_do_not_match() {
        let no = Err(MatchError::NoMatch);
        assert_eq!(
            vars("test://template/{id}/data", "test://template/1/2/data"),
            no
        );
        assert_eq!(
            vars("test://template/{id}/data", "test://template//data"),
            no
        );
        assert_eq!(
            vars("test://template/{id}/data", "test://template/1/dat"),
            no
        );
        assert_eq!(vars("test://{id}", "test://a?b"), no);
        assert_eq!(vars("test://{id}", "other://a"), no);
        assert_eq!(vars("test://x", "test://x/"), no);
    }

    #[test]
    fn values_are_decoded_and_checked() {
        assert_eq!(
            vars("t://{name}", "t://hello%20world"),
            Ok(pairs(&[("name", "hello world")]))
        );
        for (uri, reason) in [
            ("f:///{+p}", "f:///../etc/passwd"),
            ("f:///{+p}", "f:///a/..%2F..%2Fx"),
            ("f:///{+p}", "f:////etc/passwd"),
            ("f:///{+p}", "f:///a%00b"),
            ("f:///{+p}", "f:///a%zz"),
            ("f:///{+p}", "f:///C:/x"),
        ]
        .iter()
        .map(|(t, u)| (*u, vars(t, u)))
        {
            assert!(matches!(reason, Err(MatchError::Unsafe { .. })), "{uri}");
        }
        assert!(matches!(
            vars("t://{name}", "t://%2E%2E"),
            Err(MatchError::Unsafe { .. })
        ));
    }

    #[test]
    fn ambiguous_or_unsupported_templates_are_refused() {
        for bad in [
            "t://{a}{b}",
            "t://{+a}/{+b}",
            "t://{a}/{a}",
            "t://{?q}",
            "t://{a",
            "t://a}",
            "t://{}",
            "t://{1a}",
            "t://{a*}",
        ] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad}");
        }
        let t = UriTemplate::parse("t://{a}/x/{+b}").unwrap();
        assert_eq!(t.variables(), ["a", "b"]);
        assert_eq!(t.as_str(), "t://{a}/x/{+b}");
    }

    #[test]
    fn a_long_uri_is_no_match() {
        let uri = format!("t://{}", "a".repeat(MAX_URI_BYTES));
        assert_eq!(vars("t://{+x}", &uri), Err(MatchError::NoMatch));
    }
}
