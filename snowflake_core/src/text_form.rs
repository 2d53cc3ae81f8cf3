//! Text forms of an id, for clients that cannot hold a 64-bit integer (a JavaScript
//! number loses digits past 2^53) and for short ids in URLs: Crockford base32, 13
//! characters, and base62, 11 characters.
//!
//! Both alphabets are in ASCII order and every id takes the full width, padded with
//! zeros, so the byte order of the text (COLLATE "C") is the order of the ids.

use crate::layout::LayoutError;
use crate::report::{Report, Reported, SqlState};

/// Text that is no id of its form, or a form that does not exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextFormError {
    /// Text not as long as its form's ids.
    Length {
        form: Form,
        text: String,
        length: usize,
    },
    /// A character outside the form's digits, at its position (from 1) in the text.
    Character {
        form: Form,
        text: String,
        character: char,
        position: usize,
    },
    /// Text that writes a number past the largest id, `i64::MAX`.
    OutOfRange { form: Form, text: String },
    /// A text form other than base32 and base62.
    UnknownForm(String),
    /// Ids are never negative, so no text writes one.
    NegativeId(i64),
}

/// A character as a message shows it: quoted, or by its code point if it does not print.
fn shown(character: char) -> String {
    if character.is_control() {
        format!("U+{:04X}", u32::from(character))
    } else {
        format!("\"{character}\"")
    }
}

impl Reported for TextFormError {
    fn report(&self) -> Report {
        use SqlState::*;
        match self {
            TextFormError::Length { form, text, length } => Report::new(
                InvalidTextRepresentation,
                format!(
                    "invalid {} snowflake id \"{text}\": it has {length} characters, not {}",
                    form.name(),
                    form.width()
                ),
            )
            .detail(form.syntax()),
            TextFormError::Character {
                form,
                text,
                character,
                position,
            } => Report::new(
                InvalidTextRepresentation,
                format!(
                    "invalid {} snowflake id \"{text}\": {} at position {position} is not a {} digit",
                    form.name(),
                    shown(*character),
                    form.name()
                ),
            )
            .detail(form.syntax()),
            TextFormError::OutOfRange { form, text } => Report::new(
                NumericValueOutOfRange,
                format!("{} snowflake id \"{text}\" is out of range", form.name()),
            )
            .detail(format!(
                "The largest {} snowflake id is {}: {}.",
                form.name(),
                largest(*form),
                i64::MAX
            )),
            TextFormError::UnknownForm(name) => Report::new(
                InvalidParameterValue,
                format!("unknown text form \"{name}\""),
            )
            .detail("The text forms are base32 (Crockford's, 13 characters) and base62 (11 characters)."),
            TextFormError::NegativeId(id) => LayoutError::NegativeId(*id).report(),
        }
    }
}

/// Crockford's base32 digits: 0-9 and A-Z without I, L, O and U, in ASCII order.
const BASE32: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/// 0-9, A-Z, a-z: ASCII order.
const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Base32,
    Base62,
}

impl Form {
    /// The form of a name, in any case, as PostgreSQL's `encode` reads its format.
    pub fn named(name: &str) -> Result<Form, TextFormError> {
        [Form::Base32, Form::Base62]
            .into_iter()
            .find(|form| form.name().eq_ignore_ascii_case(name))
            .ok_or_else(|| TextFormError::UnknownForm(name.into()))
    }

    pub fn name(self) -> &'static str {
        match self {
            Form::Base32 => "base32",
            Form::Base62 => "base62",
        }
    }

    fn alphabet(self) -> &'static [u8] {
        match self {
            Form::Base32 => BASE32,
            Form::Base62 => BASE62,
        }
    }

    /// The fewest digits that hold every id from 0 to `i64::MAX`.
    pub fn width(self) -> usize {
        match self {
            Form::Base32 => 13,
            Form::Base62 => 11,
        }
    }

    /// How to write an id in this form, for the detail of the errors.
    pub fn syntax(self) -> String {
        match self {
            Form::Base32 => format!(
                "A base32 snowflake id is {} Crockford base32 digits: 0-9 and A-Z without I, L, O and U, in either case; I and L read as 1, O as 0.",
                self.width()
            ),
            Form::Base62 => format!(
                "A base62 snowflake id is {} digits 0-9, A-Z and a-z, case sensitive.",
                self.width()
            ),
        }
    }

    /// The value of a digit. Crockford base32 reads either case, and the letters that
    /// look like digits as those digits.
    fn digit(self, c: char) -> Option<u64> {
        let c = match self {
            Form::Base32 => match c.to_ascii_uppercase() {
                'I' | 'L' => '1',
                'O' => '0',
                upper => upper,
            },
            Form::Base62 => c,
        };
        let position = self
            .alphabet()
            .iter()
            .position(|&digit| char::from(digit) == c);
        position.map(|value| value as u64)
    }
}

/// The id as `form.width()` digits, most significant first.
pub fn encode(id: i64, form: Form) -> Result<String, TextFormError> {
    if id < 0 {
        return Err(TextFormError::NegativeId(id));
    }
    Ok(digits(id as u64, form))
}

/// The text of the largest id, `i64::MAX`, for the detail of an out-of-range error.
pub fn largest(form: Form) -> String {
    digits(i64::MAX as u64, form)
}

fn digits(value: u64, form: Form) -> String {
    let alphabet = form.alphabet();
    let base = alphabet.len() as u64;
    let mut rest = value;
    let mut digits = vec![0u8; form.width()];
    for digit in digits.iter_mut().rev() {
        *digit = alphabet[(rest % base) as usize];
        rest /= base;
    }
    digits.into_iter().map(char::from).collect()
}

/// The id that `text` writes in `form`: exactly `form.width()` digits, at most `i64::MAX`.
pub fn decode(text: &str, form: Form) -> Result<i64, TextFormError> {
    let length = text.chars().count();
    if length != form.width() {
        return Err(TextFormError::Length {
            form,
            text: text.into(),
            length,
        });
    }
    let base = form.alphabet().len() as u128;
    // Wide enough for every text of the width: 32^13 and 62^11 are both below 2^66.
    let mut value: u128 = 0;
    for (index, character) in text.chars().enumerate() {
        let digit = form
            .digit(character)
            .ok_or_else(|| TextFormError::Character {
                form,
                text: text.into(),
                character,
                position: index + 1,
            })?;
        value = value * base + u128::from(digit);
    }
    i64::try_from(value).map_err(|_| TextFormError::OutOfRange {
        form,
        text: text.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Rng;

    const FORMS: [Form; 2] = [Form::Base32, Form::Base62];

    /// A random id of random magnitude, so short ids are drawn as often as long ones.
    fn random_id(rng: &mut Rng) -> i64 {
        (rng.next_u64() >> (1 + rng.below(63))) as i64
    }

    #[test]
    fn the_extremes_encode_to_known_text_and_back() {
        for (id, base32, base62) in [
            (0, "0000000000000", "00000000000"),
            (1, "0000000000001", "00000000001"),
            (31, "000000000000Z", "0000000000V"),
            (62, "000000000001Y", "00000000010"),
            (912_414_338_541_690_884, "0SACC06WC0804", "15Orm5uyV8O"),
            (i64::MAX, "7ZZZZZZZZZZZZ", "AzL8n0Y58m7"),
        ] {
            assert_eq!(encode(id, Form::Base32).unwrap(), base32);
            assert_eq!(encode(id, Form::Base62).unwrap(), base62);
            assert_eq!(decode(base32, Form::Base32), Ok(id));
            assert_eq!(decode(base62, Form::Base62), Ok(id));
        }
    }

    #[test]
    fn each_width_is_the_fewest_digits_that_hold_every_id() {
        for form in FORMS {
            let base = form.alphabet().len() as u128;
            let width = form.width() as u32;
            assert!(base.pow(width - 1) <= i64::MAX as u128, "{form:?}");
            assert!(base.pow(width) > i64::MAX as u128, "{form:?}");
        }
    }

    #[test]
    fn the_alphabets_are_in_ascii_order() {
        for form in FORMS {
            assert!(form.alphabet().windows(2).all(|pair| pair[0] < pair[1]));
        }
        assert!(!BASE32.iter().any(|c| b"ILOU".contains(c)));
    }

    #[test]
    fn property_every_id_round_trips_at_full_width() {
        let mut rng = Rng::new(21);
        for _ in 0..100_000 {
            let id = random_id(&mut rng);
            for form in FORMS {
                let text = encode(id, form).unwrap();
                assert_eq!(text.len(), form.width(), "{id} {form:?}");
                assert_eq!(decode(&text, form), Ok(id), "{text}");
            }
        }
    }

    #[test]
    fn property_text_order_is_id_order() {
        let mut rng = Rng::new(22);
        for _ in 0..100_000 {
            let (a, b) = (random_id(&mut rng), random_id(&mut rng));
            // Neighbours too: the order must hold where only the last digit differs.
            let neighbour = a.saturating_add(1);
            for form in FORMS {
                let text = |id| encode(id, form).unwrap().into_bytes();
                assert_eq!(text(a).cmp(&text(b)), a.cmp(&b), "{a} {b} {form:?}");
                assert_eq!(text(a).cmp(&text(neighbour)), a.cmp(&neighbour));
            }
        }
    }

    #[test]
    fn property_crockford_reads_either_case_and_the_look_alike_letters() {
        let mut rng = Rng::new(23);
        for _ in 0..100_000 {
            let id = random_id(&mut rng);
            let mut written = String::new();
            for c in encode(id, Form::Base32).unwrap().chars() {
                let look_alikes: &[char] = match c {
                    '1' => &['1', 'I', 'i', 'L', 'l'],
                    '0' => &['0', 'O', 'o'],
                    c => &[c, c.to_ascii_lowercase()],
                };
                written.push(look_alikes[rng.below(look_alikes.len() as u64) as usize]);
            }
            assert_eq!(decode(&written, Form::Base32), Ok(id), "{written}");
        }
    }

    #[test]
    fn base62_is_case_sensitive() {
        assert_eq!(decode("0000000000a", Form::Base62), Ok(36));
        assert_eq!(decode("0000000000A", Form::Base62), Ok(10));
    }

    #[test]
    fn form_names_are_read_in_any_case() {
        assert_eq!(Form::named("base32"), Ok(Form::Base32));
        assert_eq!(Form::named("BASE62"), Ok(Form::Base62));
        for name in ["base64", "", " base32", "hex"] {
            assert_eq!(
                Form::named(name),
                Err(TextFormError::UnknownForm(name.into()))
            );
        }
    }

    #[test]
    fn negative_ids_have_no_text_form() {
        for id in [-1, i64::MIN] {
            for form in FORMS {
                assert_eq!(encode(id, form), Err(TextFormError::NegativeId(id)));
            }
        }
    }

    #[test]
    fn text_of_another_length_is_refused_with_its_length() {
        for (text, form, length) in [
            ("", Form::Base32, 0),
            ("000000000000", Form::Base32, 12),
            ("00000000000000", Form::Base32, 14),
            ("01ARZ3NDEKTSV4RRFFQ69G5FAV", Form::Base32, 26),
            ("0000000000", Form::Base62, 10),
            ("0000000000000", Form::Base62, 13),
            // Counted in characters, not bytes.
            ("ééééé", Form::Base62, 5),
        ] {
            assert_eq!(
                decode(text, form),
                Err(TextFormError::Length {
                    form,
                    text: text.into(),
                    length
                })
            );
        }
    }

    #[test]
    fn a_bad_character_is_named_with_its_position() {
        for (text, form, character, position) in [
            ("000000000000U", Form::Base32, 'U', 13),
            ("u000000000000", Form::Base32, 'u', 1),
            ("0000-00000000", Form::Base32, '-', 5),
            ("000000 000000", Form::Base32, ' ', 7),
            ("00000000000é0", Form::Base32, 'é', 12),
            ("0000000000_", Form::Base62, '_', 11),
            ("+0000000000", Form::Base62, '+', 1),
        ] {
            assert_eq!(
                decode(text, form),
                Err(TextFormError::Character {
                    form,
                    text: text.into(),
                    character,
                    position
                })
            );
        }
    }

    #[test]
    fn text_past_the_largest_id_is_out_of_range() {
        for (text, form) in [
            ("8000000000000", Form::Base32),
            ("zzzzzzzzzzzzz", Form::Base32),
            ("AzL8n0Y58m8", Form::Base62),
            ("zzzzzzzzzzz", Form::Base62),
        ] {
            assert_eq!(
                decode(text, form),
                Err(TextFormError::OutOfRange {
                    form,
                    text: text.into()
                })
            );
        }
    }

    #[test]
    fn every_error_says_what_is_wrong_and_what_is_allowed() {
        let cases = [
            (
                decode("0000000000000", Form::Base62),
                "invalid base62 snowflake id \"0000000000000\": it has 13 characters, not 11",
                "A base62 snowflake id is 11 digits 0-9, A-Z and a-z, case sensitive.",
            ),
            (
                decode("000000000000U", Form::Base32),
                "invalid base32 snowflake id \"000000000000U\": \"U\" at position 13 is not a base32 digit",
                "A base32 snowflake id is 13 Crockford base32 digits: 0-9 and A-Z without I, L, O and U, in either case; I and L read as 1, O as 0.",
            ),
            (
                decode("000000\n000000", Form::Base32),
                "invalid base32 snowflake id \"000000\n000000\": U+000A at position 7 is not a base32 digit",
                "A base32 snowflake id is 13 Crockford base32 digits: 0-9 and A-Z without I, L, O and U, in either case; I and L read as 1, O as 0.",
            ),
            (
                decode("8000000000000", Form::Base32),
                "base32 snowflake id \"8000000000000\" is out of range",
                "The largest base32 snowflake id is 7ZZZZZZZZZZZZ: 9223372036854775807.",
            ),
            (
                decode("AzL8n0Y58m8", Form::Base62),
                "base62 snowflake id \"AzL8n0Y58m8\" is out of range",
                "The largest base62 snowflake id is AzL8n0Y58m7: 9223372036854775807.",
            ),
            (
                Form::named("base64").map(|_| 0),
                "unknown text form \"base64\"",
                "The text forms are base32 (Crockford's, 13 characters) and base62 (11 characters).",
            ),
        ];
        for (result, message, detail) in cases {
            let report = result.unwrap_err().report();
            assert_eq!(report.message, message);
            assert_eq!(report.detail.as_deref(), Some(detail));
        }
    }
}
