//! `log`: HTTP access logs. A log is a row of `address` (struct of four uint8), `identity`,
//! `userid`, `date`, `request` (utf8), `code` (uint16) and `size` (uint64).

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use shapeshift_types::{TableSchema, Value};

use super::{narrow, records_of, schema_of, string, take, text, unsigned, TableRows};

#[derive(
    Clone, Copy, Debug, PartialEq, Serialize, Deserialize, bitcode::Encode, bitcode::Decode,
)]
pub struct Address {
    pub x0: u8,
    pub x1: u8,
    pub x2: u8,
    pub x3: u8,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, bitcode::Encode, bitcode::Decode)]
pub struct Log {
    pub address: Address,
    pub identity: String,
    pub userid: String,
    pub date: String,
    pub request: String,
    pub code: u16,
    pub size: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, bitcode::Encode, bitcode::Decode)]
pub struct Logs {
    pub logs: Vec<Log>,
}

/// The benchmark's record count.
pub const LOG_COUNT: usize = 10_000;

const USERIDS: [&str; 9] = [
    "-", "alice", "bob", "carmen", "david", "eric", "frank", "george", "harry",
];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
const METHODS: [&str; 5] = ["GET", "POST", "PUT", "UPDATE", "DELETE"];
const ROUTES: [&str; 7] = [
    "/favicon.ico",
    "/css/index.css",
    "/css/font-awsome.min.css",
    "/img/logo-full.svg",
    "/img/splash.jpg",
    "/api/login",
    "/api/logout",
];
const PROTOCOLS: [&str; 4] = ["HTTP/1.0", "HTTP/1.1", "HTTP/2", "HTTP/3"];

/// HTTP status codes the benchmark draws from: the registered ones from 100 to 511.
fn status_codes() -> Vec<u16> {
    let mut codes: Vec<u16> = (100..=103).chain(200..=208).collect();
    codes.push(226);
    codes.extend(300..=308);
    codes.extend(400..=418);
    codes.extend(421..=426);
    codes.extend([428, 429, 431, 451]);
    codes.extend(500..=508);
    codes.extend([510, 511]);
    codes
}

/// `count` access logs from `seed`: random IPv4 addresses, a user from a fixed list, a date
/// between 1970 and 2021 with a whole-hour time zone, a request line of method, route and
/// protocol, a registered status code and a size below 100,000,000.
pub fn logs(count: usize, seed: u64) -> Logs {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let codes = status_codes();
    let logs = (0..count)
        .map(|_| {
            let address = Address {
                x0: rng.random_range(0..=255),
                x1: rng.random_range(0..=255),
                x2: rng.random_range(0..=255),
                x3: rng.random_range(0..=255),
            };
            let zone: i32 = rng.random_range(-12..=12);
            let date = format!(
                "{}/{}/{}:{}:{}:{} {}{:02}00",
                rng.random_range(1..=28),
                MONTHS[rng.random_range(0..MONTHS.len())],
                rng.random_range(1970..=2021),
                rng.random_range(0..24),
                rng.random_range(0..60),
                rng.random_range(0..60),
                if zone < 0 { '-' } else { '+' },
                zone.abs(),
            );
            let request = format!(
                "{} {} {}",
                METHODS[rng.random_range(0..METHODS.len())],
                ROUTES[rng.random_range(0..ROUTES.len())],
                PROTOCOLS[rng.random_range(0..PROTOCOLS.len())],
            );
            Log {
                address,
                identity: "-".into(),
                userid: USERIDS[rng.random_range(0..USERIDS.len())].into(),
                date,
                request,
                code: codes[rng.random_range(0..codes.len())],
                size: rng.random_range(0..100_000_000),
            }
        })
        .collect();
    Logs { logs }
}

impl TableRows for Logs {
    fn schema() -> TableSchema {
        schema_of(
            "[{name=address; type_v3={type_name=struct; members=[\
               {name=x0; type=uint8}; {name=x1; type=uint8}; {name=x2; type=uint8}; {name=x3; type=uint8}]}};\
             {name=identity; type_v3=utf8}; {name=userid; type_v3=utf8}; {name=date; type_v3=utf8};\
             {name=request; type_v3=utf8}; {name=code; type_v3=uint16}; {name=size; type_v3=uint64}]",
        )
    }

    fn for_each_row(
        &self,
        mut row: impl FnMut(Vec<Value>) -> Result<(), String>,
    ) -> Result<(), String> {
        for log in &self.logs {
            let a = log.address;
            row(vec![
                Value::Tuple(
                    [a.x0, a.x1, a.x2, a.x3]
                        .map(|x| Value::Uint64(x.into()))
                        .to_vec(),
                ),
                string(&log.identity),
                string(&log.userid),
                string(&log.date),
                string(&log.request),
                Value::Uint64(log.code.into()),
                Value::Uint64(log.size),
            ])?;
        }
        Ok(())
    }

    fn from_rows(rows: impl Iterator<Item = Result<Vec<Value>, String>>) -> Result<Logs, String> {
        let logs = records_of(
            rows,
            "log",
            |[address, identity, userid, date, request, code, size]| {
                let [x0, x1, x2, x3] = take(address, "address")?;
                Ok(Log {
                    address: Address {
                        x0: narrow(x0)?,
                        x1: narrow(x1)?,
                        x2: narrow(x2)?,
                        x3: narrow(x3)?,
                    },
                    identity: text(identity)?,
                    userid: text(userid)?,
                    date: text(date)?,
                    request: text(request)?,
                    code: narrow(code)?,
                    size: unsigned(size)?,
                })
            },
        )?;
        Ok(Logs { logs })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_deterministic_and_keeps_the_benchmarks_ranges() {
        assert_eq!(logs(200, 7), logs(200, 7));
        assert_ne!(logs(200, 7), logs(200, 8));
        assert_eq!(status_codes().len(), 63);
        for log in &logs(2000, 1).logs {
            assert!(
                (100..=511).contains(&log.code) && log.size < 100_000_000,
                "{log:?}"
            );
            assert!(USERIDS.contains(&log.userid.as_str()) && log.identity == "-");
            let (_, zone) = log.date.split_once(' ').unwrap();
            assert_eq!(zone.len(), 5, "{}", log.date);
            assert_eq!(log.request.split(' ').count(), 3);
        }
    }
}
