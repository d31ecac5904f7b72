//! Closed-form curves for figures: a small arithmetic language in one variable `x`.
//!
//! Grammar (usual precedence; `^` binds tightest and to the right, unary minus below it):
//!
//! ```text
//! expr  = term  (("+" | "-") term)*
//! term  = unary (("*" | "/") unary)*
//! unary = "-" unary | power
//! power = atom ("^" unary)?
//! atom  = number | "x" | "pi" | name "(" expr ("," expr)* ")" | "(" expr ")"
//! ```
//!
//! Functions: `sin cos tan asin acos atan sqrt exp ln log10 abs` (one argument), `min max pow`
//! (two). Angles are in radians (`sin(x*pi/180)` for degrees). For example Coulomb's
//! acceleration down an incline of `x` degrees at μ = 0.5 is
//! `9.81*max(0, sin(x*pi/180) - 0.5*cos(x*pi/180))`.

/// A parsed expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A number.
    Number(f64),
    /// The variable `x`.
    X,
    /// `-a`.
    Neg(Box<Expr>),
    /// `a op b` for `op` in `+ - * / ^`.
    Binary(char, Box<Expr>, Box<Expr>),
    /// A function of one or two arguments.
    Call(&'static str, Vec<Expr>),
}

/// The functions and their argument counts.
const FUNCTIONS: [(&str, usize); 14] = [
    ("sin", 1),
    ("cos", 1),
    ("tan", 1),
    ("asin", 1),
    ("acos", 1),
    ("atan", 1),
    ("sqrt", 1),
    ("exp", 1),
    ("ln", 1),
    ("log10", 1),
    ("abs", 1),
    ("min", 2),
    ("max", 2),
    ("pow", 2),
];

impl Expr {
    /// Parses `text`; the error says what was expected and at which character.
    pub fn parse(text: &str) -> Result<Expr, String> {
        let mut p = Parser { chars: text.chars().collect(), at: 0 };
        let e = p.expr()?;
        p.skip();
        match p.peek() {
            None => Ok(e),
            Some(c) => Err(p.error(&format!("unexpected `{c}`"))),
        }
    }

    /// The value at `x` (NaN where the expression is undefined, e.g. `sqrt(-1)`).
    pub fn eval(&self, x: f64) -> f64 {
        match self {
            Expr::Number(v) => *v,
            Expr::X => x,
            Expr::Neg(a) => -a.eval(x),
            Expr::Binary(op, a, b) => {
                let (a, b) = (a.eval(x), b.eval(x));
                match op {
                    '+' => a + b,
                    '-' => a - b,
                    '*' => a * b,
                    '/' => a / b,
                    _ => a.powf(b),
                }
            }
            Expr::Call(name, args) => {
                let a = args[0].eval(x);
                let b = args.get(1).map_or(f64::NAN, |b| b.eval(x));
                match *name {
                    "sin" => a.sin(),
                    "cos" => a.cos(),
                    "tan" => a.tan(),
                    "asin" => a.asin(),
                    "acos" => a.acos(),
                    "atan" => a.atan(),
                    "sqrt" => a.sqrt(),
                    "exp" => a.exp(),
                    "ln" => a.ln(),
                    "log10" => a.log10(),
                    "abs" => a.abs(),
                    "min" => a.min(b),
                    "max" => a.max(b),
                    _ => a.powf(b),
                }
            }
        }
    }
}

struct Parser {
    chars: Vec<char>,
    at: usize,
}

impl Parser {
    fn error(&self, what: &str) -> String {
        let text: String = self.chars.iter().collect();
        format!("{what} at character {} of `{text}`", self.at + 1)
    }

    fn skip(&mut self) {
        while self.chars.get(self.at).is_some_and(|c| c.is_whitespace()) {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip();
        self.chars.get(self.at).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        let found = self.peek() == Some(c);
        self.at += usize::from(found);
        found
    }

    fn expr(&mut self) -> Result<Expr, String> {
        let mut left = self.term()?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            self.at += 1;
            left = Expr::Binary(op, Box::new(left), Box::new(self.term()?));
        }
        Ok(left)
    }

    fn term(&mut self) -> Result<Expr, String> {
        let mut left = self.unary()?;
        while let Some(op @ ('*' | '/')) = self.peek() {
            self.at += 1;
            left = Expr::Binary(op, Box::new(left), Box::new(self.unary()?));
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.eat('-') {
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        let base = self.atom()?;
        if self.eat('^') {
            return Ok(Expr::Binary('^', Box::new(base), Box::new(self.unary()?)));
        }
        Ok(base)
    }

    fn atom(&mut self) -> Result<Expr, String> {
        match self.peek() {
            Some('(') => {
                self.at += 1;
                let e = self.expr()?;
                if !self.eat(')') {
                    return Err(self.error("expected `)`"));
                }
                Ok(e)
            }
            Some(c) if c.is_ascii_digit() || c == '.' => self.number(),
            Some(c) if c.is_ascii_alphabetic() => {
                let start = self.at;
                while self.chars.get(self.at).is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_') {
                    self.at += 1;
                }
                let name: String = self.chars[start..self.at].iter().collect();
                match name.as_str() {
                    "x" => return Ok(Expr::X),
                    "pi" => return Ok(Expr::Number(std::f64::consts::PI)),
                    _ => {}
                }
                let Some(&(known, arity)) = FUNCTIONS.iter().find(|(f, _)| *f == name) else {
                    self.at = start;
                    let names = FUNCTIONS.iter().map(|(f, _)| *f).chain(["x", "pi"]);
                    let hint = solverlab_core::names::did_you_mean(&name, names);
                    return Err(self.error(&format!("unknown name `{name}`{hint} (the variable is `x`)")));
                };
                if !self.eat('(') {
                    return Err(self.error(&format!("expected `(` after `{name}`")));
                }
                let mut args = vec![self.expr()?];
                while self.eat(',') {
                    args.push(self.expr()?);
                }
                if !self.eat(')') {
                    return Err(self.error("expected `)`"));
                }
                if args.len() != arity {
                    return Err(self.error(&format!("`{name}` takes {arity} argument(s), not {}", args.len())));
                }
                Ok(Expr::Call(known, args))
            }
            Some(c) => Err(self.error(&format!("unexpected `{c}`"))),
            None => Err(self.error("unexpected end")),
        }
    }

    fn number(&mut self) -> Result<Expr, String> {
        let start = self.at;
        let digits = |p: &mut Parser| {
            while p.chars.get(p.at).is_some_and(|c| c.is_ascii_digit() || *c == '.') {
                p.at += 1;
            }
        };
        digits(self);
        if self.chars.get(self.at).is_some_and(|c| *c == 'e' || *c == 'E') {
            let save = self.at;
            self.at += 1;
            if self.chars.get(self.at).is_some_and(|c| *c == '+' || *c == '-') {
                self.at += 1;
            }
            if self.chars.get(self.at).is_some_and(char::is_ascii_digit) {
                digits(self);
            } else {
                self.at = save;
            }
        }
        let text: String = self.chars[start..self.at].iter().collect();
        text.parse().map(Expr::Number).map_err(|_| {
            self.at = start;
            self.error(&format!("`{text}` is not a number"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, x: f64) -> f64 {
        Expr::parse(text).unwrap().eval(x)
    }

    #[test]
    fn precedence_and_associativity() {
        assert_eq!(at("1 + 2 * 3", 0.0), 7.0);
        assert_eq!(at("(1 + 2) * 3", 0.0), 9.0);
        assert_eq!(at("2 ^ 3 ^ 2", 0.0), 512.0);
        assert_eq!(at("-2 ^ 2", 0.0), -4.0);
        assert_eq!(at("8 / 4 / 2", 0.0), 1.0);
        assert_eq!(at("10 - 3 - 2", 0.0), 5.0);
        assert_eq!(at("2*x^2 + 1.5e-1", 3.0), 18.15);
        assert_eq!(at("x*2e1", 1.0), 20.0);
    }

    #[test]
    fn functions_match_the_standard_library() {
        let x = 0.3;
        assert_eq!(at("sin(x)", x), x.sin());
        assert_eq!(at("sqrt(x)", x), x.sqrt());
        assert_eq!(at("max(0, ln(x))", x), 0.0);
        assert_eq!(at("pow(x, 3)", x), x.powf(3.0));
        let coulomb = "9.81*max(0, sin(x*pi/180) - 0.5*cos(x*pi/180))";
        let want = 9.81 * (35f64.to_radians().sin() - 0.5 * 35f64.to_radians().cos());
        assert!((at(coulomb, 35.0) - want).abs() < 1e-12);
        assert_eq!(at(coulomb, 20.0), 0.0);
        assert!(at("sqrt(-1)", 0.0).is_nan());
    }

    #[test]
    fn errors_say_what_and_where() {
        for (text, says) in [
            ("1 +", "unexpected end"),
            ("sine(x)", "did you mean `sin`"),
            ("y + 1", "unknown name `y`"),
            ("max(1)", "takes 2 argument"),
            ("(1 + 2", "expected `)`"),
            ("1 2", "unexpected `2` at character 3"),
            ("1..2", "not a number"),
            ("sqrt x", "expected `(`"),
        ] {
            let err = Expr::parse(text).unwrap_err();
            assert!(err.contains(says), "{text}: {err}");
        }
    }
}
