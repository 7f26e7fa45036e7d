//! The benchmark's input: N apps, generated deterministically, the same for every run and
//! every tool. `examples/bench.rs` writes them as latgen declarations and as the Helm
//! chart's values; `tests/suite/stored.rs` renders them to check the output at the benchmark's
//! sizes.

use std::collections::BTreeSet;

/// Deterministic, well mixed numbers for the generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

// First segments share string prefixes on purpose (/shop, /shopping, /shops...).
const ROOTS: &[&str] = &[
    "shop",
    "shopping",
    "shops",
    "shop-admin",
    "cart",
    "carts",
    "checkout",
    "pay",
    "payment",
    "payments",
    "order",
    "orders",
    "order-history",
    "account",
    "accounts",
    "auth",
    "user",
    "users",
    "search",
    "search-suggest",
    "catalog",
    "product",
    "products",
    "inventory",
    "ship",
    "shipping",
    "track",
    "review",
    "reviews",
    "promo",
    "media",
    "img",
    "static",
    "api",
    "admin",
    "help",
    "support",
    "chat",
    "report",
    "reports",
    "gift",
    "wish",
    "store",
    "stores",
    "feed",
    "blog",
    "news",
    "partner",
    "vendor",
    "m",
    "a",
    "ab",
    "abc",
];
const SUBS: &[&str] = &[
    "v1", "v2", "v22", "cart", "items", "list", "search", "admin", "public", "events", "beta",
    "eu", "us",
];
const NAMESPACES: usize = 24;

pub struct GenApp {
    pub name: String,
    pub namespace: String,
    pub paths: Vec<String>,
    pub host: Option<String>,
    pub port: u16,
}

/// N apps: ~8% on their own host, 1-3 unique paths each, many sharing string prefixes and
/// some nesting segment-wise.
pub fn generate(n: usize) -> Vec<GenApp> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ n as u64);
    let mut used = BTreeSet::new();
    (0..n)
        .map(|i| {
            let name = format!("app-{i:06}");
            let namespace = format!("team-{:02}", rng.below(NAMESPACES));
            let port = [80, 3000, 8080][rng.below(3)];
            if rng.below(100) < 8 {
                let mut paths = vec!["/".to_string()];
                if rng.below(2) == 0 {
                    paths.push(format!("/{}", ROOTS[rng.below(ROOTS.len())]));
                }
                return GenApp {
                    host: Some(format!("{name}.example.com")),
                    name,
                    namespace,
                    paths,
                    port,
                };
            }
            let count = 1 + rng.below(3);
            let mut paths = Vec::new();
            while paths.len() < count {
                let root = ROOTS[rng.below(ROOTS.len())];
                let p = match rng.below(4) {
                    0 => format!("/{root}"),
                    1 => format!("/{root}/{}", SUBS[rng.below(SUBS.len())]),
                    _ => format!("/{root}-{i}"),
                };
                if used.insert(p.clone()) {
                    paths.push(p);
                }
            }
            GenApp {
                name,
                namespace,
                paths,
                host: None,
                port,
            }
        })
        .collect()
}

impl GenApp {
    /// The app's declaration, as in `apps/<name>.yaml`.
    pub fn declaration(&self) -> String {
        let mut decl = format!(
            "namespace: {}\nservice: {{ name: {}, port: {} }}\npaths: [{}]\n",
            self.namespace,
            self.name,
            self.port,
            self.paths.join(", ")
        );
        if let Some(h) = &self.host {
            decl.push_str(&format!("host: {h}\n"));
        }
        decl
    }
}
