//! The line parser behind [`super::parse`].

use std::collections::{BTreeMap, BTreeSet};

use rebalance::assignor::ASSIGNOR_NAMES;
use rebalance::protocol::Fault;
use rebalance::{MemberId, TopicPartition};

use super::{
    Event, MAX_SCENARIO_MS, MAX_SCENARIO_PARTITIONS, MemberDecl, Ownership, ProtocolChoice, Script,
    ScriptError, ScriptErrorKind, Stable, Step, Until,
};

/// See [`super::parse`].
pub(super) fn parse(source_name: &str, text: &str) -> Result<Script, ScriptError> {
    let mut parser = Parser {
        script: Script {
            source_name: source_name.to_owned(),
            protocol: ProtocolChoice::Cooperative,
            assignor: "uniform-v2".to_owned(),
            delay_ms: 0,
            max_moves: 1,
            topics: BTreeMap::new(),
            members: BTreeMap::new(),
            stable: None,
            faults: BTreeSet::new(),
            steps: Vec::new(),
        },
        seen: BTreeSet::new(),
        line: 0,
    };
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let content = raw.split('#').next().unwrap_or("");
        let words: Vec<&str> = content.split_whitespace().collect();
        if words.is_empty() {
            continue;
        }
        parser.line(line, &words).map_err(|kind| ScriptError {
            source_name: source_name.to_owned(),
            line,
            kind,
        })?;
    }
    Ok(parser.script)
}

struct Parser {
    script: Script,
    /// Once-only setup commands already given.
    seen: BTreeSet<&'static str>,
    /// The line being parsed.
    line: usize,
}

type LineResult = Result<(), ScriptErrorKind>;

impl Parser {
    fn line(&mut self, line: usize, words: &[&str]) -> LineResult {
        self.line = line;
        let (command, args) = (words[0], &words[1..]);
        match command {
            "protocol" => self.setup_once("protocol")?.protocol(args),
            "assignor" => self.setup_once("assignor")?.assignor(args),
            "delay" => self.setup_once("delay")?.delay(args),
            "max-moves" => self.setup_once("max-moves")?.max_moves(args),
            "topic" => self.setup("topic")?.topic(args),
            "member" => self.setup("member")?.member(args),
            "stable" => self.setup_once("stable")?.stable(args),
            "fault" => self.setup("fault")?.fault(args),
            _ => {
                let event = self.event(command, args)?;
                self.script.steps.push(Step { line, event });
                Ok(())
            }
        }
    }

    fn setup(&mut self, command: &'static str) -> Result<&mut Self, ScriptErrorKind> {
        if self.script.steps.is_empty() {
            Ok(self)
        } else {
            Err(ScriptErrorKind::SetupAfterEvents(command))
        }
    }

    fn setup_once(&mut self, command: &'static str) -> Result<&mut Self, ScriptErrorKind> {
        self.setup(command)?;
        if !self.seen.insert(command) {
            return Err(ScriptErrorKind::Repeated(command));
        }
        Ok(self)
    }

    fn protocol(&mut self, args: &[&str]) -> LineResult {
        let [name] = args else {
            return Err(usage(
                "protocol",
                "protocol eager|cooperative|deferred|incremental",
            ));
        };
        self.script.protocol = match *name {
            "eager" => ProtocolChoice::Eager,
            "cooperative" => ProtocolChoice::Cooperative,
            "deferred" => ProtocolChoice::Deferred,
            "incremental" => ProtocolChoice::Incremental,
            other => return Err(ScriptErrorKind::UnknownProtocol(other.to_owned())),
        };
        Ok(())
    }

    fn assignor(&mut self, args: &[&str]) -> LineResult {
        let [name] = args else {
            return Err(usage("assignor", "assignor NAME"));
        };
        if !ASSIGNOR_NAMES.contains(name) {
            return Err(ScriptErrorKind::UnknownAssignor((*name).to_owned()));
        }
        self.script.assignor = (*name).to_owned();
        Ok(())
    }

    fn delay(&mut self, args: &[&str]) -> LineResult {
        let [ms] = args else {
            return Err(usage("delay", "delay MS"));
        };
        self.script.delay_ms = number("delay", ms, MAX_SCENARIO_MS)?;
        Ok(())
    }

    fn max_moves(&mut self, args: &[&str]) -> LineResult {
        let [n] = args else {
            return Err(usage("max-moves", "max-moves N"));
        };
        self.script.max_moves = small_number("max-moves", n, u64::from(u32::MAX))?;
        Ok(())
    }

    fn topic(&mut self, args: &[&str]) -> LineResult {
        let [name, count] = args else {
            return Err(usage("topic", "topic NAME PARTITIONS"));
        };
        let name = name_word("topic name", name)?;
        let count = small_number("partition count", count, u64::from(MAX_SCENARIO_PARTITIONS))?;
        if self.script.topics.insert(name.clone(), count).is_some() {
            return Err(ScriptErrorKind::DuplicateTopic(name));
        }
        Ok(())
    }

    fn member(&mut self, args: &[&str]) -> LineResult {
        const USAGE: &str = "member ID [rack R] subscribe T1,T2";
        let (id, rack, topics) = match args {
            [id, "subscribe", topics] => (id, None, topics),
            [id, "rack", rack, "subscribe", topics] => (id, Some(rack), topics),
            _ => return Err(usage("member", USAGE)),
        };
        let id = member_id(id)?;
        let rack = rack.map(|r| name_word("rack", r)).transpose()?;
        let topics = topic_list(topics)?;
        self.declare(id, MemberDecl { rack, topics })
    }

    fn declare(&mut self, id: MemberId, decl: MemberDecl) -> LineResult {
        if self.script.members.contains_key(&id) {
            return Err(ScriptErrorKind::DuplicateMember(id));
        }
        self.script.members.insert(id, decl);
        Ok(())
    }

    fn fault(&mut self, args: &[&str]) -> LineResult {
        let [name] = args else {
            return Err(usage("fault", "fault KAFKA-N"));
        };
        // One Kafka bug may take several core switches (KAFKA-12890 takes two).
        let faults: Vec<Fault> = Fault::ALL
            .into_iter()
            .filter(|f| f.issue().eq_ignore_ascii_case(name))
            .collect();
        if faults.is_empty() {
            return Err(ScriptErrorKind::UnknownFault((*name).to_owned()));
        }
        self.script.faults.extend(faults);
        Ok(())
    }

    fn stable(&mut self, args: &[&str]) -> LineResult {
        if args.is_empty() {
            return Err(usage("stable", "stable A=T-0,T-3 B=T-1"));
        }
        let ownership = self.ownership(args, true)?;
        self.script.stable = Some(Stable {
            line: self.line,
            ownership,
        });
        Ok(())
    }

    /// Parses `A=T-0,T-3 B=` entries. With `check_subscribed`, every partition's topic must be
    /// declared, in range and subscribed by its owner (a stable generation must be valid);
    /// `expect` lines are only checked for form, since topics and subscriptions change.
    fn ownership(
        &self,
        args: &[&str],
        check_subscribed: bool,
    ) -> Result<Ownership, ScriptErrorKind> {
        let mut ownership = Ownership::new();
        let mut all = BTreeSet::new();
        for entry in args {
            let Some((member, list)) = entry.split_once('=') else {
                return Err(usage(
                    "ownership",
                    "MEMBER=T-0,T-1 (or MEMBER= for nothing)",
                ));
            };
            let member = self.known_member(member)?;
            let mut owned = BTreeSet::new();
            for text in list.split(',').filter(|s| !s.is_empty()) {
                let partition = partition(text)?;
                if check_subscribed {
                    self.check_partition(&member, &partition)?;
                }
                if !all.insert(partition.clone()) {
                    return Err(ScriptErrorKind::DuplicatePartition(partition));
                }
                owned.insert(partition);
            }
            if ownership.insert(member.clone(), owned).is_some() {
                return Err(ScriptErrorKind::DuplicateEntry(member));
            }
        }
        Ok(ownership)
    }

    fn check_partition(&self, member: &MemberId, partition: &TopicPartition) -> LineResult {
        let Some(&count) = self.script.topics.get(&partition.topic) else {
            return Err(ScriptErrorKind::UnknownTopic(partition.clone()));
        };
        if partition.partition < 0 || partition.partition as u64 >= u64::from(count) {
            return Err(ScriptErrorKind::PartitionRange {
                partition: partition.clone(),
                count,
            });
        }
        let subscribed = self
            .script
            .members
            .get(member)
            .is_some_and(|d| d.topics.contains(&partition.topic));
        if !subscribed {
            return Err(ScriptErrorKind::NotSubscribed {
                member: member.clone(),
                partition: partition.clone(),
            });
        }
        Ok(())
    }

    fn known_member(&self, text: &str) -> Result<MemberId, ScriptErrorKind> {
        let id = member_id(text)?;
        if self.script.members.contains_key(&id) {
            Ok(id)
        } else {
            Err(ScriptErrorKind::UnknownMember(id))
        }
    }

    fn event(&mut self, command: &str, args: &[&str]) -> Result<Event, ScriptErrorKind> {
        let one_member = |usage_text: &'static str, name: &'static str| match args {
            [id] => self.known_member(id),
            _ => Err(usage(name, usage_text)),
        };
        Ok(match command {
            "join" => Event::Join(one_member("join ID", "join")?),
            "leave" => Event::Leave(one_member("leave ID", "leave")?),
            "crash" => Event::Crash(one_member("crash ID", "crash")?),
            "isolate" => Event::Isolate(one_member("isolate ID", "isolate")?),
            "heal" => Event::Heal(one_member("heal ID", "heal")?),
            "bounce" => return self.bounce(args),
            "leader-leaves" => no_args(args, "leader-leaves", Event::LeaderLeaves)?,
            "failover" => no_args(args, "failover", Event::Failover)?,
            "subscribe" => {
                let [id, topics] = args else {
                    return Err(usage("subscribe", "subscribe ID T1,T2"));
                };
                Event::Subscribe(self.known_member(id)?, topic_list(topics)?)
            }
            "partitions" => {
                let [topic, count] = args else {
                    return Err(usage("partitions", "partitions TOPIC N"));
                };
                let count =
                    small_number("partition count", count, u64::from(MAX_SCENARIO_PARTITIONS))?;
                Event::Partitions(name_word("topic name", topic)?, count)
            }
            "wait" => {
                let [ms] = args else {
                    return Err(usage("wait", "wait MS"));
                };
                Event::Wait(number("wait", ms, MAX_SCENARIO_MS)?)
            }
            "run" => match args {
                [] => Event::Run,
                ["until", rest @ ..] => Event::RunUntil(self.until(rest)?),
                _ => return Err(usage("run", "run [until CONDITION]")),
            },
            "expect" => Event::Expect(self.ownership(args, false)?),
            other => return Err(ScriptErrorKind::UnknownCommand(other.to_owned())),
        })
    }

    fn bounce(&mut self, args: &[&str]) -> Result<Event, ScriptErrorKind> {
        const USAGE: &str = "bounce ID as ID2 [after MS]";
        let (from, to, after) = match args {
            [from, "as", to] => (from, to, None),
            [from, "as", to, "after", ms] => (from, to, Some(ms)),
            _ => return Err(usage("bounce", USAGE)),
        };
        let from = self.known_member(from)?;
        let to = member_id(to)?;
        let after_ms = after
            .map(|ms| number("bounce delay", ms, MAX_SCENARIO_MS))
            .transpose()?;
        // The replacement runs the same configuration under a new id: declare it now so later
        // lines may name it.
        let decl = self.script.members[&from].clone();
        self.declare(to.clone(), decl)?;
        Ok(Event::Bounce {
            from,
            to,
            after_ms: after_ms.unwrap_or(0),
        })
    }

    fn until(&self, args: &[&str]) -> Result<Until, ScriptErrorKind> {
        const USAGE: &str = "run until rebalancing|told ID|joined ID|persisted generation|persisted assignment|synced ID";
        Ok(match args {
            ["rebalancing"] => Until::Rebalancing,
            ["persisted", "generation"] => Until::GenerationPersisted,
            ["persisted", "assignment"] => Until::AssignmentPersisted,
            ["told", id] => Until::Told(self.known_member(id)?),
            ["joined", id] => Until::Joined(self.known_member(id)?),
            ["synced", id] => Until::Synced(self.known_member(id)?),
            _ => return Err(usage("run", USAGE)),
        })
    }
}

pub(super) fn usage(command: &'static str, usage: &'static str) -> ScriptErrorKind {
    ScriptErrorKind::Usage { command, usage }
}

fn no_args(args: &[&str], command: &'static str, event: Event) -> Result<Event, ScriptErrorKind> {
    if args.is_empty() {
        Ok(event)
    } else {
        Err(usage(command, command))
    }
}

fn number(what: &'static str, text: &str, max: u64) -> Result<u64, ScriptErrorKind> {
    match text.parse::<u64>() {
        Ok(n) if n <= max => Ok(n),
        _ => Err(ScriptErrorKind::Number {
            what,
            text: text.to_owned(),
            max,
        }),
    }
}

fn small_number(what: &'static str, text: &str, max: u64) -> Result<u32, ScriptErrorKind> {
    let n = number(what, text, max)?;
    u32::try_from(n).map_err(|_| ScriptErrorKind::Number {
        what,
        text: text.to_owned(),
        max,
    })
}

fn name_word(what: &'static str, text: &str) -> Result<String, ScriptErrorKind> {
    let valid = !text.is_empty()
        && text.len() <= 249
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '\''));
    if valid {
        Ok(text.to_owned())
    } else {
        Err(ScriptErrorKind::Name {
            what,
            text: text.to_owned(),
        })
    }
}

fn member_id(text: &str) -> Result<MemberId, ScriptErrorKind> {
    name_word("member id", text).map(MemberId)
}

fn topic_list(text: &str) -> Result<BTreeSet<String>, ScriptErrorKind> {
    let topics = text
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|t| name_word("topic name", t))
        .collect::<Result<BTreeSet<_>, _>>()?;
    if topics.is_empty() {
        return Err(ScriptErrorKind::EmptyTopics);
    }
    Ok(topics)
}

/// Parses `TOPIC-N`, splitting at the last `-`.
fn partition(text: &str) -> Result<TopicPartition, ScriptErrorKind> {
    let syntax = || ScriptErrorKind::PartitionSyntax(text.to_owned());
    let (topic, number) = text.rsplit_once('-').ok_or_else(syntax)?;
    let topic = name_word("topic name", topic).map_err(|_| syntax())?;
    let n = number.parse::<u32>().map_err(|_| syntax())?;
    let n = i32::try_from(n).map_err(|_| syntax())?;
    Ok(TopicPartition::new(topic, n))
}
