//! How message text is cut into index terms: Tantivy's default (split on anything not
//! alphanumeric, drop tokens over 40 bytes, lower-case), plus common grams. Wherever
//! two very common words stand next to each other ("of the", "it is") an extra term
//! joining them is indexed at the first word's position, and a phrase query uses it in
//! place of the two. This is what Lucene's CommonGrams filter does: a phrase of two
//! common words becomes one term lookup instead of intersecting two posting lists that
//! each hold most of the index.
//!
//! Invariants: every word is still indexed on its own, at its own position, so term
//! queries and phrases without common pairs are unchanged; a gram contains
//! [`GRAM_JOINER`], which the word tokenizer never produces, so no word can collide with
//! a gram; query building and indexing use this same analyser.

use std::collections::HashSet;
use std::sync::LazyLock;

use tantivy::tokenizer::{
    LowerCaser, RemoveLongFilter, SimpleTokenizer, TextAnalyzer, Token, TokenFilter, TokenStream, Tokenizer,
};

/// The name the analyser is registered under (the schema refers to it).
pub const NAME: &str = "transcript";
/// Joins the two words of a gram.
pub const GRAM_JOINER: char = '\u{1}';

/// Words so frequent in English prose that a phrase of two of them matches a large share
/// of all messages.
const COMMON: &[&str] = &[
    "a", "all", "also", "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "does", "for", "from", "has",
    "have", "i", "if", "in", "into", "is", "it", "its", "just", "me", "my", "no", "not", "now", "of", "on", "only",
    "or", "our", "so", "than", "that", "the", "their", "then", "there", "these", "they", "this", "those", "to", "was",
    "we", "were", "what", "when", "which", "will", "with", "you", "your",
];

static COMMON_WORDS: LazyLock<HashSet<&'static str>> = LazyLock::new(|| COMMON.iter().copied().collect());

fn is_common(word: &str) -> bool {
    COMMON_WORDS.contains(word)
}

/// The analyser of the `text` field.
pub fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(CommonGrams)
        .build()
}

/// Whether an analysed term is a gram of two common words.
pub fn is_gram(term: &str) -> bool {
    term.contains(GRAM_JOINER)
}

/// The token filter adding common grams.
#[derive(Clone)]
pub struct CommonGrams;

impl TokenFilter for CommonGrams {
    type Tokenizer<T: Tokenizer> = CommonGramsFilter<T>;

    fn transform<T: Tokenizer>(self, tokenizer: T) -> Self::Tokenizer<T> {
        CommonGramsFilter { tokenizer }
    }
}

#[derive(Clone)]
pub struct CommonGramsFilter<T> {
    tokenizer: T,
}

impl<T: Tokenizer> Tokenizer for CommonGramsFilter<T> {
    type TokenStream<'a> = CommonGramsStream<T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        CommonGramsStream {
            tail: self.tokenizer.token_stream(text),
            current: Token::default(),
            next: None,
            gram_due: false,
        }
    }
}

/// Emits each word, then (when it and the next word are both common) their gram, then
/// the next word: one word of look-ahead.
pub struct CommonGramsStream<S> {
    tail: S,
    current: Token,
    /// The word after `current`, already taken from the tail.
    next: Option<Token>,
    /// `current` and `next` are both common: their gram comes before `next`.
    gram_due: bool,
}

impl<S: TokenStream> TokenStream for CommonGramsStream<S> {
    fn advance(&mut self) -> bool {
        if self.gram_due {
            self.gram_due = false;
            if let Some(next) = &self.next {
                let text = format!("{}{GRAM_JOINER}{}", self.current.text, next.text);
                self.current = Token {
                    offset_from: self.current.offset_from,
                    offset_to: next.offset_to,
                    position: self.current.position,
                    text,
                    position_length: 2,
                };
                return true;
            }
        }
        let word = match self.next.take() {
            Some(word) => word,
            None if self.tail.advance() => self.tail.token().clone(),
            None => return false,
        };
        if is_common(&word.text) && self.tail.advance() {
            let next = self.tail.token().clone();
            self.gram_due = is_common(&next.text);
            self.next = Some(next);
        }
        self.current = word;
        true
    }

    fn token(&self) -> &Token {
        &self.current
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.current
    }
}

/// The terms a phrase query needs for analysed `(position, term)` pairs: each word,
/// except that a pair of common words covered by a gram is looked up as the gram.
/// Returns `(offset, term)` with offsets relative to the first word.
pub fn phrase_terms(tokens: &[(usize, String)]) -> Vec<(usize, String)> {
    let words: Vec<&(usize, String)> = tokens.iter().filter(|(_, t)| !is_gram(t)).collect();
    let gram_at = |position: usize| tokens.iter().find(|(p, t)| *p == position && is_gram(t));
    let first = words.first().map_or(0, |(p, _)| *p);
    let mut chosen = Vec::new();
    let mut covered_until = None;
    for (position, word) in words {
        if covered_until.is_some_and(|end| *position <= end) {
            continue;
        }
        match gram_at(*position) {
            Some((_, gram)) => {
                chosen.push((position - first, gram.clone()));
                covered_until = Some(position + 1);
            }
            None => chosen.push((position - first, word.clone())),
        }
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(text: &str) -> Vec<(usize, String)> {
        let mut analyzer = analyzer();
        let mut stream = analyzer.token_stream(text);
        let mut out = Vec::new();
        stream.process(&mut |token| out.push((token.position, token.text.replace(GRAM_JOINER, "+"))));
        out
    }

    #[test]
    fn pairs_of_common_words_get_a_gram_at_the_first_position() {
        assert_eq!(
            tokens("Fix the Login of the API"),
            vec![
                (0, "fix".into()),
                (1, "the".into()),
                (2, "login".into()),
                (3, "of".into()),
                (3, "of+the".into()),
                (4, "the".into()),
                (5, "api".into()),
            ]
        );
        assert_eq!(
            tokens("it is the"),
            vec![(0, "it".into()), (0, "it+is".into()), (1, "is".into()), (1, "is+the".into()), (2, "the".into())]
        );
    }

    #[test]
    fn phrases_use_grams_in_place_of_the_pairs_they_cover() {
        let analysed = |text: &str| {
            let mut analyzer = analyzer();
            let mut stream = analyzer.token_stream(text);
            let mut out = Vec::new();
            stream.process(&mut |token| out.push((token.position, token.text.clone())));
            phrase_terms(&out).into_iter().map(|(o, t)| (o, t.replace(GRAM_JOINER, "+"))).collect::<Vec<_>>()
        };
        assert_eq!(analysed("of the"), vec![(0, "of+the".into())]);
        assert_eq!(analysed("fix of the bug"), vec![(0, "fix".into()), (1, "of+the".into()), (3, "bug".into())]);
        assert_eq!(analysed("it is the"), vec![(0, "it+is".into()), (2, "the".into())]);
        assert_eq!(analysed("rate limit"), vec![(0, "rate".into()), (1, "limit".into())]);
        assert_eq!(analysed("the"), vec![(0, "the".into())]);
    }
}
