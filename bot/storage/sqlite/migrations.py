"""Versioned schema. Append a new entry to MIGRATIONS; never edit an applied one."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from bot.storage.rank_buckets import sql as bucket_sql

log = logging.getLogger(__name__)

BUCKET = bucket_sql("time_ms")  # the time bucket of a board row

MIGRATIONS: list[str] = [
    # 1: people, chats, posts, answers, runs, and score aggregates kept by triggers (until 6)
    """
    CREATE TABLE persons (
        key TEXT PRIMARY KEY,
        name TEXT NOT NULL DEFAULT '',
        locale TEXT,
        current_streak INTEGER NOT NULL DEFAULT 0,
        best_streak INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE chats (
        key TEXT PRIMARY KEY,
        title TEXT NOT NULL DEFAULT '',
        locale TEXT
    );
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        person_key TEXT NOT NULL REFERENCES persons(key),
        chat_key TEXT NOT NULL REFERENCES chats(key),
        quiz_id TEXT NOT NULL,
        questions TEXT NOT NULL,          -- JSON list of question ids in asking order
        locale TEXT NOT NULL,
        started_at INTEGER NOT NULL,      -- unix milliseconds, UTC
        finished_at INTEGER
    );
    -- at most one unfinished run per person and chat
    CREATE UNIQUE INDEX runs_active ON runs(person_key, chat_key) WHERE finished_at IS NULL;
    CREATE TABLE posts (
        id INTEGER PRIMARY KEY,
        chat_key TEXT NOT NULL REFERENCES chats(key),
        quiz_id TEXT NOT NULL,
        question_id TEXT NOT NULL,
        option_order TEXT NOT NULL,       -- JSON: option_order[shown] = canonical index
        locale TEXT NOT NULL,
        kind TEXT NOT NULL DEFAULT 'quiz',
        run_id INTEGER REFERENCES runs(id),
        created_at INTEGER NOT NULL,
        closes_at INTEGER,
        closed_at INTEGER
    );
    CREATE INDEX posts_chat ON posts(chat_key, quiz_id, question_id);
    CREATE INDEX posts_open ON posts(closes_at) WHERE closed_at IS NULL;
    CREATE INDEX posts_run ON posts(run_id) WHERE run_id IS NOT NULL;
    CREATE TABLE post_refs (
        ref TEXT PRIMARY KEY,             -- e.g. "tg-poll:5012", "dc-msg:1234"
        post_id INTEGER NOT NULL REFERENCES posts(id)
    ) WITHOUT ROWID;
    CREATE INDEX post_refs_post ON post_refs(post_id);
    CREATE TABLE answers (
        post_id INTEGER NOT NULL REFERENCES posts(id),
        person_key TEXT NOT NULL REFERENCES persons(key),
        option INTEGER NOT NULL,          -- canonical option index
        correct INTEGER NOT NULL,
        answered_at INTEGER NOT NULL,
        elapsed_ms INTEGER NOT NULL,
        chat_key TEXT NOT NULL,
        quiz_id TEXT NOT NULL,
        question_id TEXT NOT NULL,
        PRIMARY KEY (post_id, person_key) -- the first answer is final, enforced here
    );
    CREATE INDEX answers_person ON answers(person_key, answered_at);
    -- per chat (and '*' for all chats), person and UTC day; boards read this, not answers
    CREATE TABLE scores (
        chat_key TEXT NOT NULL,
        person_key TEXT NOT NULL,
        day TEXT NOT NULL,
        correct INTEGER NOT NULL,
        answered INTEGER NOT NULL,
        time_ms INTEGER NOT NULL,
        PRIMARY KEY (chat_key, day, person_key)
    ) WITHOUT ROWID;
    CREATE INDEX scores_day ON scores(day);
    -- all-time totals per chat, and across chats under chat_key '*', ranked by index
    CREATE TABLE totals (
        chat_key TEXT NOT NULL,
        person_key TEXT NOT NULL,
        correct INTEGER NOT NULL,
        answered INTEGER NOT NULL,
        time_ms INTEGER NOT NULL,
        PRIMARY KEY (chat_key, person_key)
    ) WITHOUT ROWID;
    CREATE INDEX totals_rank ON totals(chat_key, correct DESC, time_ms, person_key);
    CREATE TRIGGER answers_scored AFTER INSERT ON answers BEGIN
        INSERT INTO scores(chat_key, person_key, day, correct, answered, time_ms)
        VALUES (NEW.chat_key, NEW.person_key, date(NEW.answered_at / 1000, 'unixepoch'),
                NEW.correct, 1, NEW.elapsed_ms),
               ('*', NEW.person_key, date(NEW.answered_at / 1000, 'unixepoch'),
                NEW.correct, 1, NEW.elapsed_ms)
        ON CONFLICT(chat_key, day, person_key) DO UPDATE SET
            correct = correct + excluded.correct,
            answered = answered + 1,
            time_ms = time_ms + excluded.time_ms;
        INSERT INTO totals(chat_key, person_key, correct, answered, time_ms)
        VALUES (NEW.chat_key, NEW.person_key, NEW.correct, 1, NEW.elapsed_ms),
               ('*', NEW.person_key, NEW.correct, 1, NEW.elapsed_ms)
        ON CONFLICT(chat_key, person_key) DO UPDATE SET
            correct = correct + excluded.correct,
            answered = answered + 1,
            time_ms = time_ms + excluded.time_ms;
        UPDATE persons SET
            current_streak = CASE WHEN NEW.correct THEN current_streak + 1 ELSE 0 END,
            best_streak = MAX(best_streak, CASE WHEN NEW.correct THEN current_streak + 1 ELSE 0 END)
        WHERE key = NEW.person_key;
    END;
    """,
    # 2: daily schedules; one claim per chat and local date makes each day's post unique
    """
    CREATE TABLE schedules (
        chat_key TEXT PRIMARY KEY REFERENCES chats(key),
        local_time TEXT NOT NULL,         -- HH:MM, wall clock in tz
        tz TEXT NOT NULL,                 -- IANA name
        selector TEXT,                    -- quiz id or tag; NULL = every quiz
        open_minutes INTEGER,             -- NULL = open until the next daily question
        updated_at INTEGER NOT NULL,
        updated_by TEXT
    );
    CREATE TABLE daily_posts (
        chat_key TEXT NOT NULL,
        local_date TEXT NOT NULL,         -- YYYY-MM-DD in the schedule's zone
        post_id INTEGER NOT NULL REFERENCES posts(id),
        claimed_at INTEGER NOT NULL,
        published_at INTEGER,
        PRIMARY KEY (chat_key, local_date)
    );
    CREATE UNIQUE INDEX daily_posts_post ON daily_posts(post_id);
    CREATE INDEX posts_kind ON posts(chat_key, kind);
    """,
    # 3: a summary is marked posted once the platform took it, so a failed post is retried
    """
    ALTER TABLE posts ADD COLUMN summary_posted_at INTEGER;
    UPDATE posts SET summary_posted_at = closed_at WHERE closed_at IS NOT NULL;
    CREATE INDEX posts_unsummarised ON posts(closed_at)
        WHERE closed_at IS NOT NULL AND summary_posted_at IS NULL;
    """,
    # 4: the platform's own language for a chat (a Discord server's), the fallback when no
    # admin chose one, so scheduled posts speak it too
    """
    ALTER TABLE chats ADD COLUMN platform_locale TEXT;
    """,
    # 5: the one person who may answer a post (a private question, a quiz run's questions)
    """
    ALTER TABLE posts ADD COLUMN owner_key TEXT;
    UPDATE posts SET owner_key = (SELECT person_key FROM runs WHERE runs.id = posts.run_id)
        WHERE run_id IS NOT NULL;
    """,
    # 6: the aggregates leave the answer's transaction. No trigger any more: the materializer
    # (materializer.py) applies new answers to scores, totals and streaks in batches, in id
    # order, and stores how far it got in `materialized` in the same transaction. `answers`
    # gets an INTEGER PRIMARY KEY for that position (an implicit rowid may change on VACUUM);
    # existing answers keep their rowid as id, and the position starts after them, since the
    # trigger has already counted them.
    """
    DROP TRIGGER IF EXISTS answers_scored;
    CREATE TABLE answers_v6 (
        id INTEGER PRIMARY KEY,           -- the order answers were committed in
        post_id INTEGER NOT NULL REFERENCES posts(id),
        person_key TEXT NOT NULL REFERENCES persons(key),
        option INTEGER NOT NULL,          -- canonical option index
        correct INTEGER NOT NULL,
        answered_at INTEGER NOT NULL,
        elapsed_ms INTEGER NOT NULL,
        chat_key TEXT NOT NULL,
        quiz_id TEXT NOT NULL,
        question_id TEXT NOT NULL,
        UNIQUE (post_id, person_key)      -- the first answer is final, enforced here
    );
    INSERT INTO answers_v6(id, post_id, person_key, option, correct, answered_at, elapsed_ms,
                           chat_key, quiz_id, question_id)
        SELECT rowid, post_id, person_key, option, correct, answered_at, elapsed_ms,
               chat_key, quiz_id, question_id FROM answers ORDER BY rowid;
    DROP TABLE answers;
    ALTER TABLE answers_v6 RENAME TO answers;
    CREATE INDEX answers_person ON answers(person_key, answered_at);
    CREATE TABLE materialized (
        name TEXT PRIMARY KEY,
        position INTEGER NOT NULL         -- answers up to this id are in the aggregates
    ) WITHOUT ROWID;
    INSERT INTO materialized(name, position) SELECT 'scores', COALESCE(MAX(id), 0) FROM answers;
    """,
    # 7: boards that cost what they show (storage/boards.py). A day board walks scores_rank;
    # a week board reads week_scores, the sums of the 7 UTC days up to week_window.until
    # (kept by the materializer, rolled forward a day at a time); my rank counts the rows
    # above mine in the same indexes. answers.daily_date (the local date of a daily
    # question, set by the answer's insert) lets a board's day streaks read only daily
    # answers.
    """
    CREATE INDEX scores_rank ON scores(chat_key, day, correct DESC, time_ms, person_key);
    CREATE TABLE week_scores (
        chat_key TEXT NOT NULL,
        person_key TEXT NOT NULL,
        correct INTEGER NOT NULL,
        answered INTEGER NOT NULL,
        time_ms INTEGER NOT NULL,
        PRIMARY KEY (chat_key, person_key)
    ) WITHOUT ROWID;
    CREATE INDEX week_rank ON week_scores(chat_key, correct DESC, time_ms, person_key);
    CREATE TABLE week_window (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        until TEXT                        -- the window's last UTC day; NULL: nothing yet
    );
    INSERT INTO week_window(id, until) SELECT 1, MAX(day) FROM scores;
    INSERT INTO week_scores(chat_key, person_key, correct, answered, time_ms)
        SELECT chat_key, person_key, SUM(correct), SUM(answered), SUM(time_ms) FROM scores
        WHERE day >= date((SELECT until FROM week_window), '-6 days')
        GROUP BY chat_key, person_key;
    ALTER TABLE answers ADD COLUMN daily_date TEXT;
    UPDATE answers SET daily_date =
        (SELECT local_date FROM daily_posts WHERE daily_posts.post_id = answers.post_id)
        WHERE post_id IN (SELECT post_id FROM daily_posts);
    CREATE INDEX answers_daily ON answers(person_key, daily_date, correct, chat_key)
        WHERE daily_date IS NOT NULL;
    """,
    # 8: how many people each board has per number of correct answers, so "my rank" counts
    # only the people level with me in the rank index, and sums this for those above. Kept
    # by triggers on the aggregate tables until the last migration of the list; off the
    # answer's path either way.
    """
    CREATE TABLE rank_counts (
        board TEXT NOT NULL,              -- 'all' (totals), 'week' (week_scores), 'day' (scores)
        chat_key TEXT NOT NULL,
        day TEXT NOT NULL,                -- a 'day' board's day; '' for the others
        correct INTEGER NOT NULL,
        people INTEGER NOT NULL,
        PRIMARY KEY (board, chat_key, day, correct)
    ) WITHOUT ROWID;
    INSERT INTO rank_counts(board, chat_key, day, correct, people)
        SELECT 'all', chat_key, '', correct, COUNT(*) FROM totals GROUP BY chat_key, correct;
    INSERT INTO rank_counts(board, chat_key, day, correct, people)
        SELECT 'week', chat_key, '', correct, COUNT(*) FROM week_scores
        GROUP BY chat_key, correct;
    INSERT INTO rank_counts(board, chat_key, day, correct, people)
        SELECT 'day', chat_key, day, correct, COUNT(*) FROM scores
        GROUP BY chat_key, day, correct;
    CREATE TRIGGER totals_counted_insert AFTER INSERT ON totals BEGIN
        INSERT INTO rank_counts(board, chat_key, day, correct, people)
        VALUES ('all', NEW.chat_key, '', NEW.correct, 1)
        ON CONFLICT(board, chat_key, day, correct) DO UPDATE SET people = people + 1;
    END;
    CREATE TRIGGER totals_counted_delete AFTER DELETE ON totals BEGIN
        UPDATE rank_counts SET people = people - 1 WHERE board = 'all'
            AND chat_key = OLD.chat_key AND day = '' AND correct = OLD.correct;
    END;
    CREATE TRIGGER totals_counted_update AFTER UPDATE OF correct ON totals
    WHEN OLD.correct <> NEW.correct BEGIN
        UPDATE rank_counts SET people = people - 1 WHERE board = 'all'
            AND chat_key = OLD.chat_key AND day = '' AND correct = OLD.correct;
        INSERT INTO rank_counts(board, chat_key, day, correct, people)
        VALUES ('all', NEW.chat_key, '', NEW.correct, 1)
        ON CONFLICT(board, chat_key, day, correct) DO UPDATE SET people = people + 1;
    END;
    CREATE TRIGGER week_scores_counted_insert AFTER INSERT ON week_scores BEGIN
        INSERT INTO rank_counts(board, chat_key, day, correct, people)
        VALUES ('week', NEW.chat_key, '', NEW.correct, 1)
        ON CONFLICT(board, chat_key, day, correct) DO UPDATE SET people = people + 1;
    END;
    CREATE TRIGGER week_scores_counted_delete AFTER DELETE ON week_scores BEGIN
        UPDATE rank_counts SET people = people - 1 WHERE board = 'week'
            AND chat_key = OLD.chat_key AND day = '' AND correct = OLD.correct;
    END;
    CREATE TRIGGER week_scores_counted_update AFTER UPDATE OF correct ON week_scores
    WHEN OLD.correct <> NEW.correct BEGIN
        UPDATE rank_counts SET people = people - 1 WHERE board = 'week'
            AND chat_key = OLD.chat_key AND day = '' AND correct = OLD.correct;
        INSERT INTO rank_counts(board, chat_key, day, correct, people)
        VALUES ('week', NEW.chat_key, '', NEW.correct, 1)
        ON CONFLICT(board, chat_key, day, correct) DO UPDATE SET people = people + 1;
    END;
    CREATE TRIGGER scores_counted_insert AFTER INSERT ON scores BEGIN
        INSERT INTO rank_counts(board, chat_key, day, correct, people)
        VALUES ('day', NEW.chat_key, NEW.day, NEW.correct, 1)
        ON CONFLICT(board, chat_key, day, correct) DO UPDATE SET people = people + 1;
    END;
    CREATE TRIGGER scores_counted_delete AFTER DELETE ON scores BEGIN
        UPDATE rank_counts SET people = people - 1 WHERE board = 'day'
            AND chat_key = OLD.chat_key AND day = OLD.day AND correct = OLD.correct;
    END;
    CREATE TRIGGER scores_counted_update AFTER UPDATE OF correct ON scores
    WHEN OLD.correct <> NEW.correct BEGIN
        UPDATE rank_counts SET people = people - 1 WHERE board = 'day'
            AND chat_key = OLD.chat_key AND day = OLD.day AND correct = OLD.correct;
        INSERT INTO rank_counts(board, chat_key, day, correct, people)
        VALUES ('day', NEW.chat_key, NEW.day, NEW.correct, 1)
        ON CONFLICT(board, chat_key, day, correct) DO UPDATE SET people = people + 1;
    END;
    """,
    # 9: leases: short claims shared by every process on the database (who is delivering a
    # summary, who is posting in a chat), expiring by themselves if their holder dies
    """
    CREATE TABLE leases (
        name TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        until INTEGER NOT NULL            -- unix milliseconds, UTC
    ) WITHOUT ROWID;
    """,
    # spaced review. Cards are replayed from the answers (bot/core/review.py); a person's
    # daily reminder time, and one claim per person and local date so it is sent once a day
    """
    CREATE TABLE reminders (
        person_key TEXT PRIMARY KEY,
        local_time TEXT NOT NULL,         -- HH:MM in tz
        tz TEXT NOT NULL,
        updated_at INTEGER NOT NULL       -- unix milliseconds, UTC
    );
    CREATE TABLE reminder_days (
        person_key TEXT NOT NULL,
        local_date TEXT NOT NULL,         -- YYYY-MM-DD in the reminder's zone
        claimed_at INTEGER NOT NULL,
        PRIMARY KEY (person_key, local_date)
    ) WITHOUT ROWID;
    """,
    # rounds and chat settings: a chat's question time and mode (/settings); rounds of N
    # questions in a row, one post per step (the primary key asks each step once)
    """
    CREATE TABLE chat_settings (
        chat_key TEXT PRIMARY KEY REFERENCES chats(key),
        question_seconds INTEGER,         -- NULL: the bot's default
        mode TEXT,                        -- 'polls', 'buttons'; NULL: the platform's default
        updated_at INTEGER NOT NULL,
        updated_by TEXT
    );
    CREATE TABLE rounds (
        id INTEGER PRIMARY KEY,
        chat_key TEXT NOT NULL,
        selector TEXT,
        total INTEGER NOT NULL,
        mode TEXT,
        locale TEXT NOT NULL,
        started_at INTEGER NOT NULL,
        finished_at INTEGER
    );
    CREATE INDEX rounds_active ON rounds(chat_key) WHERE finished_at IS NULL;
    CREATE TABLE round_posts (
        round_id INTEGER NOT NULL REFERENCES rounds(id),
        step INTEGER NOT NULL,
        post_id INTEGER NOT NULL REFERENCES posts(id),
        PRIMARY KEY (round_id, step)
    );
    """,
    # problem reports: what a person says is wrong with a question ("⚑", /report); at most
    # one open report per person and question (a second one is appended to it)
    """
    CREATE TABLE problem_reports (
        id INTEGER PRIMARY KEY,
        quiz_id TEXT NOT NULL,
        question_id TEXT NOT NULL,
        person_key TEXT NOT NULL,
        person_name TEXT NOT NULL,
        chat_key TEXT NOT NULL,
        text TEXT NOT NULL,
        created_at INTEGER NOT NULL,      -- unix milliseconds, UTC
        updated_at INTEGER NOT NULL,
        resolved_at INTEGER,
        resolution TEXT
    );
    CREATE UNIQUE INDEX problem_reports_open ON problem_reports(person_key, quiz_id, question_id)
        WHERE resolved_at IS NULL;
    CREATE INDEX problem_reports_by_person ON problem_reports(person_key, created_at);
    """,
    # item-analysis chart on a question's close summary (/settings chart on|off); NULL: off
    """
    ALTER TABLE chat_settings ADD COLUMN chart INTEGER;
    """,
    # authoring on Telegram: an author's open draft (one each) and its questions, each with
    # the message it came from so a redelivered poll is added once; published packs (YAML)
    """
    CREATE TABLE drafts (
        author_key TEXT PRIMARY KEY,
        locale TEXT NOT NULL,             -- the language its texts are written in
        title TEXT,
        created_at INTEGER NOT NULL       -- unix milliseconds, UTC
    );
    CREATE TABLE draft_questions (
        author_key TEXT NOT NULL REFERENCES drafts(author_key),
        number INTEGER NOT NULL,          -- 1, 2, … in the order sent
        question TEXT NOT NULL,           -- JSON: prompt, options, answer, explanation
        ref TEXT NOT NULL,                -- e.g. "tg-msg:<chat>:<message>"
        added_at INTEGER NOT NULL,
        PRIMARY KEY (author_key, number)
    );
    CREATE UNIQUE INDEX draft_questions_ref ON draft_questions(author_key, ref);
    CREATE TABLE authored_packs (
        quiz_id TEXT PRIMARY KEY,
        author_key TEXT NOT NULL,
        pack TEXT NOT NULL,               -- the pack's YAML, validated when published
        published_at INTEGER NOT NULL
    );
    """,
    # a name that is an id ("tg:1003") or blank was saved over a real one: unknown ('') from
    # now on, so the person's next real name replaces it and boards never show the id
    """
    UPDATE persons SET name = '' WHERE name <> '' AND (
        name = key OR trim(name) = ''
        OR ((substr(name, 1, 3) IN ('tg:', 'dc:')) AND length(name) > 3
            AND ltrim(substr(name, 4), '-0123456789') = ''));
    """,
    # /settings quiz admins: only the chat's admins start or replace a question; NULL: anyone
    """
    ALTER TABLE chat_settings ADD COLUMN admins_only INTEGER;
    """,
    # /unpublish: the pack is no longer offered, its answers keep their quiz, its id stays taken
    """
    ALTER TABLE authored_packs ADD COLUMN withdrawn_at INTEGER;
    """,
    # rank_counts kept by the materializer in Python, in the transaction that changes the
    # aggregates (materializer.py), not by nine triggers firing per aggregate row; counted
    # once more here, so a file is right whatever wrote it before
    """
    DROP TRIGGER IF EXISTS totals_counted_insert;
    DROP TRIGGER IF EXISTS totals_counted_delete;
    DROP TRIGGER IF EXISTS totals_counted_update;
    DROP TRIGGER IF EXISTS week_scores_counted_insert;
    DROP TRIGGER IF EXISTS week_scores_counted_delete;
    DROP TRIGGER IF EXISTS week_scores_counted_update;
    DROP TRIGGER IF EXISTS scores_counted_insert;
    DROP TRIGGER IF EXISTS scores_counted_delete;
    DROP TRIGGER IF EXISTS scores_counted_update;
    DELETE FROM rank_counts;
    INSERT INTO rank_counts(board, chat_key, day, correct, people)
        SELECT 'all', chat_key, '', correct, COUNT(*) FROM totals GROUP BY chat_key, correct;
    INSERT INTO rank_counts(board, chat_key, day, correct, people)
        SELECT 'week', chat_key, '', correct, COUNT(*) FROM week_scores
        GROUP BY chat_key, correct;
    INSERT INTO rank_counts(board, chat_key, day, correct, people)
        SELECT 'day', chat_key, day, correct, COUNT(*) FROM scores
        GROUP BY chat_key, day, correct;
    """,
    # the organiser's dashboard (bot/web): a chat's answers by person and time (pages and
    # exports read index ranges), a post's round, and the generation `/dashboard revoke`
    # bumps to end every link and session of the chat
    """
    CREATE INDEX answers_chat_person ON answers(chat_key, person_key, answered_at);
    CREATE INDEX round_posts_post ON round_posts(post_id);
    CREATE TABLE dashboard_access (
        chat_key TEXT PRIMARY KEY,
        generation INTEGER NOT NULL
    ) WITHOUT ROWID;
    -- a chat's people, answers and right answers, all time and per UTC day: the dashboard's
    -- overview reads one row (or a month of rows), not a chat's 100,000 people. Kept, like
    -- rank_counts, by whoever writes the aggregates, in the same transaction: the
    -- materializer (materializer.py), a chat's move, a person's deletion. Nothing of this is
    -- on the answer's path, and no trigger fires per aggregate row.
    CREATE TABLE chat_figures (
        chat_key TEXT PRIMARY KEY,
        people INTEGER NOT NULL,
        answered INTEGER NOT NULL,
        correct INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE chat_day_figures (
        chat_key TEXT NOT NULL,
        day TEXT NOT NULL,
        people INTEGER NOT NULL,
        answered INTEGER NOT NULL,
        correct INTEGER NOT NULL,
        PRIMARY KEY (chat_key, day)
    ) WITHOUT ROWID;
    INSERT INTO chat_figures(chat_key, people, answered, correct)
        SELECT chat_key, COUNT(*), SUM(answered), SUM(correct) FROM totals GROUP BY chat_key;
    INSERT INTO chat_day_figures(chat_key, day, people, answered, correct)
        SELECT chat_key, day, COUNT(*), SUM(answered), SUM(correct) FROM scores
        GROUP BY chat_key, day;
    """,
    # question cards uploaded once per platform: the platform's file id, by the card's hash
    """
    CREATE TABLE uploads (
        key TEXT PRIMARY KEY,
        ref TEXT NOT NULL,
        uploaded_at INTEGER NOT NULL
    );
    """,
    # exactly once: the keys of the commands handled (storage/commands.py), so a redelivered
    # command that changes state finds its key, stored with its effect, and does not run
    # twice; round summaries and review reminders marked once their platform confirmed them,
    # those of the past as delivered (storage/deliveries.py); the steps of a delivery that
    # went out (a summary's chart before its text)
    """
    CREATE TABLE handled_commands (
        key TEXT PRIMARY KEY,
        handled_at INTEGER NOT NULL       -- unix milliseconds, UTC
    ) WITHOUT ROWID;
    CREATE INDEX handled_commands_at ON handled_commands(handled_at);
    ALTER TABLE rounds ADD COLUMN summary_posted_at INTEGER;
    UPDATE rounds SET summary_posted_at = finished_at WHERE finished_at IS NOT NULL;
    ALTER TABLE reminder_days ADD COLUMN sent_at INTEGER;
    UPDATE reminder_days SET sent_at = claimed_at;
    CREATE INDEX rounds_unposted ON rounds(finished_at) WHERE summary_posted_at IS NULL;
    CREATE INDEX reminder_days_unsent ON reminder_days(claimed_at) WHERE sent_at IS NULL;
    CREATE TABLE delivery_steps (
        name TEXT NOT NULL,
        step TEXT NOT NULL,
        done_at INTEGER NOT NULL,
        PRIMARY KEY (name, step)
    ) WITHOUT ROWID;
    """,
    # live sessions (/host, /peer): one unfinished per chat; each question is a post of kind
    # 'live' whose answers are ordinary answers; a peer round's revotes are kept apart
    """
    CREATE TABLE live_sessions (
        id INTEGER PRIMARY KEY,
        chat_key TEXT NOT NULL,
        kind TEXT NOT NULL,
        host_key TEXT NOT NULL,
        selector TEXT,
        total INTEGER NOT NULL,
        seconds INTEGER NOT NULL,
        speed INTEGER NOT NULL,
        teams INTEGER NOT NULL,
        locale TEXT NOT NULL,
        state TEXT NOT NULL,
        closes_at INTEGER,
        paused_ms INTEGER,
        version INTEGER NOT NULL DEFAULT 0,
        started_at INTEGER NOT NULL,
        finished_at INTEGER
    );
    CREATE UNIQUE INDEX live_one_per_chat ON live_sessions(chat_key) WHERE finished_at IS NULL;
    CREATE TABLE live_steps (
        session_id INTEGER NOT NULL REFERENCES live_sessions(id),
        step INTEGER NOT NULL,
        post_id INTEGER NOT NULL,
        skipped INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (session_id, step)
    );
    CREATE TABLE live_players (
        session_id INTEGER NOT NULL REFERENCES live_sessions(id),
        person_key TEXT NOT NULL,
        name TEXT NOT NULL,
        team INTEGER,
        joined_at INTEGER NOT NULL,
        PRIMARY KEY (session_id, person_key)
    );
    CREATE TABLE live_revotes (
        post_id INTEGER NOT NULL,
        person_key TEXT NOT NULL,
        option INTEGER NOT NULL,
        correct INTEGER NOT NULL,
        answered_at INTEGER NOT NULL,
        PRIMARY KEY (post_id, person_key)
    );
    """,
    # authoring with pictures: a photo an author sent, waiting for their next quiz poll (which
    # takes it); a published pack's pictures, by the path its YAML names them with
    """
    ALTER TABLE drafts ADD COLUMN photo BLOB;
    CREATE TABLE authored_files (
        quiz_id TEXT NOT NULL REFERENCES authored_packs(quiz_id),
        path TEXT NOT NULL,               -- relative to the pack's folder, e.g. images/x-1.jpg
        data BLOB NOT NULL,
        PRIMARY KEY (quiz_id, path)
    );
    """,
    # /settings peer PERCENT and discussion TIME: a peer round's threshold (percent right at
    # the first vote that skips the discussion) and its discussion (seconds); NULL: defaults
    """
    ALTER TABLE chat_settings ADD COLUMN peer_threshold INTEGER;
    ALTER TABLE chat_settings ADD COLUMN peer_discussion INTEGER;
    """,
    # /host ... teams N choose: people choose their team on joining; a chat's sessions newest
    # first (the dashboard's Sessions page)
    """
    ALTER TABLE live_sessions ADD COLUMN team_choice INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX live_sessions_of_chat ON live_sessions(chat_key, id);
    """,
    # the dashboard's item analysis (bot/storage/item_figures.py): each person's first answer
    # to each question per chat, first answers per option, and per question the people
    # grouped by their first answers in the quiz; kept by the materializer, counted here once
    """
    CREATE TABLE item_firsts (
        chat_key TEXT NOT NULL,
        quiz_id TEXT NOT NULL,
        person_key TEXT NOT NULL,
        question_id TEXT NOT NULL,
        option INTEGER NOT NULL,
        correct INTEGER NOT NULL,
        PRIMARY KEY (chat_key, quiz_id, person_key, question_id)
    ) WITHOUT ROWID;
    CREATE INDEX item_firsts_person ON item_firsts(person_key);
    CREATE TABLE item_options (
        chat_key TEXT NOT NULL,
        quiz_id TEXT NOT NULL,
        question_id TEXT NOT NULL,
        option INTEGER NOT NULL,
        people INTEGER NOT NULL,
        PRIMARY KEY (chat_key, quiz_id, question_id, option)
    ) WITHOUT ROWID;
    CREATE TABLE item_groups (
        chat_key TEXT NOT NULL,
        quiz_id TEXT NOT NULL,
        question_id TEXT NOT NULL,
        answered INTEGER NOT NULL,
        correct INTEGER NOT NULL,
        item_right INTEGER NOT NULL,
        people INTEGER NOT NULL,
        PRIMARY KEY (chat_key, quiz_id, question_id, answered, correct, item_right)
    ) WITHOUT ROWID;
    INSERT INTO item_firsts(chat_key, quiz_id, question_id, person_key, option, correct)
        SELECT a.chat_key, a.quiz_id, a.question_id, a.person_key, a.option,
               CASE WHEN a.correct THEN 1 ELSE 0 END
        FROM answers AS a JOIN (SELECT min(id) AS id FROM answers
                                GROUP BY chat_key, person_key, quiz_id, question_id) AS f
        ON f.id = a.id;
    INSERT INTO item_options(chat_key, quiz_id, question_id, option, people)
        SELECT chat_key, quiz_id, question_id, option, count(*) FROM item_firsts
        GROUP BY chat_key, quiz_id, question_id, option;
    INSERT INTO item_groups(chat_key, quiz_id, question_id, answered, correct, item_right,
                            people)
        SELECT chat_key, quiz_id, question_id, answered, right_in_quiz, correct, count(*)
        FROM (SELECT chat_key, quiz_id, question_id, correct,
                     count(*) OVER (PARTITION BY chat_key, quiz_id, person_key) AS answered,
                     sum(correct) OVER (PARTITION BY chat_key, quiz_id, person_key)
                         AS right_in_quiz
              FROM item_firsts) AS f
        GROUP BY chat_key, quiz_id, question_id, answered, right_in_quiz, correct;
    """,
    # the daily question's streaks per chat (bot/storage/day_runs.py): each person's run of
    # days with a right daily answer there, kept by the materializer, counted here once
    """
    CREATE TABLE day_runs (
        chat_key TEXT NOT NULL,
        person_key TEXT NOT NULL,
        last_day TEXT NOT NULL,
        run INTEGER NOT NULL,
        best INTEGER NOT NULL,
        PRIMARY KEY (chat_key, person_key)
    ) WITHOUT ROWID;
    CREATE INDEX day_runs_current ON day_runs(chat_key, last_day, run);
    CREATE INDEX day_runs_best ON day_runs(chat_key, best);
    CREATE INDEX day_runs_person ON day_runs(person_key);
    INSERT INTO day_runs(chat_key, person_key, last_day, run, best)
        SELECT chat_key, person_key, last_day, run, best FROM (
            SELECT chat_key, person_key, max(d) AS last_day, count(*) AS run,
                   max(count(*)) OVER (PARTITION BY chat_key, person_key) AS best,
                   row_number() OVER (PARTITION BY chat_key, person_key
                                      ORDER BY max(d) DESC) AS newest
            FROM (SELECT chat_key, person_key, d,
                         julianday(d) - row_number() OVER (
                             PARTITION BY chat_key, person_key ORDER BY d) AS island
                  FROM (SELECT DISTINCT chat_key, person_key, daily_date AS d FROM answers
                        WHERE daily_date IS NOT NULL AND correct) AS days) AS numbered
            GROUP BY chat_key, person_key, island) AS runs
        WHERE newest = 1;
    """,
    # review cards (bot/storage/cards.py): each person's FSRS card per question, with the chat
    # that last moved it, and per chat and UTC due day how many cards fall due; kept by the
    # materializer. FSRS is not SQL: every person with answers is left pending here, and
    # opening the storage replays them (cards.count_pending). And the dashboard's Reports
    # page: a chat's open reports by id, a page at a time
    """
    CREATE TABLE cards (
        person_key TEXT NOT NULL,
        quiz_id TEXT NOT NULL,
        question_id TEXT NOT NULL,
        chat_key TEXT NOT NULL,
        due INTEGER NOT NULL,
        stability REAL,
        difficulty REAL,
        state INTEGER NOT NULL,
        step INTEGER,
        last_review INTEGER NOT NULL,
        reps INTEGER NOT NULL,
        lapses INTEGER NOT NULL,
        PRIMARY KEY (person_key, quiz_id, question_id)
    ) WITHOUT ROWID;
    CREATE INDEX cards_person_due ON cards(person_key, due, quiz_id, question_id);
    CREATE INDEX cards_chat ON cards(chat_key);
    CREATE TABLE card_days (
        chat_key TEXT NOT NULL,
        day TEXT NOT NULL,
        cards INTEGER NOT NULL,
        PRIMARY KEY (chat_key, day)
    ) WITHOUT ROWID;
    CREATE TABLE cards_pending (person_key TEXT PRIMARY KEY) WITHOUT ROWID;
    INSERT INTO cards_pending(person_key) SELECT DISTINCT person_key FROM answers;
    CREATE INDEX problem_reports_chat_open ON problem_reports(chat_key, id)
        WHERE resolved_at IS NULL;
    """,
    # rank_counts per number of correct answers and time bucket (bot/storage/rank_buckets.py):
    # my rank sums the faster buckets of my tie group and counts in the rank index only my own
    # bucket. Counted again here; bucket's DEFAULT serves statements of older migrations only
    f"""
    CREATE TABLE rank_groups (
        board TEXT NOT NULL,
        chat_key TEXT NOT NULL,
        day TEXT NOT NULL,
        correct INTEGER NOT NULL,
        bucket INTEGER NOT NULL DEFAULT 0,
        people INTEGER NOT NULL,
        PRIMARY KEY (board, chat_key, day, correct, bucket)
    ) WITHOUT ROWID;
    INSERT INTO rank_groups(board, chat_key, day, correct, bucket, people)
        SELECT 'all', chat_key, '', correct, {BUCKET}, COUNT(*) FROM totals GROUP BY 2, 4, 5;
    INSERT INTO rank_groups(board, chat_key, day, correct, bucket, people)
        SELECT 'week', chat_key, '', correct, {BUCKET}, COUNT(*) FROM week_scores
        GROUP BY 2, 4, 5;
    INSERT INTO rank_groups(board, chat_key, day, correct, bucket, people)
        SELECT 'day', chat_key, day, correct, {BUCKET}, COUNT(*) FROM scores
        GROUP BY 2, 3, 4, 5;
    DROP TABLE rank_counts;
    ALTER TABLE rank_groups RENAME TO rank_counts;
    """,
    # kinds of question (bot/core/grading.py): the canonical answer of a kind not answered
    # with one option (whose `option` is -1), and how sure the person said they were;
    # /settings confidence: whether the chat asks (NULL: off)
    """
    ALTER TABLE answers ADD COLUMN response TEXT;
    ALTER TABLE answers ADD COLUMN confidence INTEGER;
    ALTER TABLE chat_settings ADD COLUMN confidence INTEGER;
    """,
    # the dashboard's item figures of those kinds (bot/storage/item_figures.py): each first
    # answer's response, and first answers per question and response (a multi's picks, the
    # numbers and texts typed, the orders), counted from the answers already there
    """
    ALTER TABLE item_firsts ADD COLUMN response TEXT;
    UPDATE item_firsts SET response = (
        SELECT a.response FROM answers AS a WHERE a.chat_key = item_firsts.chat_key
        AND a.quiz_id = item_firsts.quiz_id AND a.question_id = item_firsts.question_id
        AND a.person_key = item_firsts.person_key ORDER BY a.id LIMIT 1)
    WHERE option = -1;
    CREATE TABLE item_responses (
        chat_key TEXT NOT NULL,
        quiz_id TEXT NOT NULL,
        question_id TEXT NOT NULL,
        response TEXT NOT NULL,
        people INTEGER NOT NULL,
        PRIMARY KEY (chat_key, quiz_id, question_id, response)
    ) WITHOUT ROWID;
    INSERT INTO item_responses(chat_key, quiz_id, question_id, response, people)
        SELECT chat_key, quiz_id, question_id, response, count(*) FROM item_firsts
        WHERE response IS NOT NULL GROUP BY chat_key, quiz_id, question_id, response;
    """,
    # the platform's kind of each chat (bot/storage/chat_kinds.py): polls or buttons are
    # decided without a lookup that spends the send budget
    """
    ALTER TABLE chats ADD COLUMN kind TEXT;
    """,
    # assignments (bot/core/assignments.py): a quiz or topic given to a chat with a deadline,
    # the runs its members take it in, each member's reminder and the deadline's summary,
    # each claimed once (a row of assignment_reminders; summary_claimed_at)
    """
    CREATE TABLE assignments (
        id INTEGER PRIMARY KEY,
        chat_key TEXT NOT NULL,
        selector TEXT NOT NULL,
        quizzes TEXT NOT NULL,            -- JSON list of quiz ids, taken in this order
        total INTEGER NOT NULL,
        token TEXT NOT NULL,
        locale TEXT NOT NULL,
        tz TEXT NOT NULL,
        deadline INTEGER NOT NULL,
        remind_at INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        created_by TEXT,
        cancelled_at INTEGER,
        summary_claimed_at INTEGER,
        summary_posted_at INTEGER
    );
    CREATE INDEX assignments_chat ON assignments(chat_key, deadline);
    CREATE INDEX assignments_open ON assignments(deadline) WHERE summary_claimed_at IS NULL;
    CREATE TABLE assignment_runs (
        assignment_id INTEGER NOT NULL REFERENCES assignments(id),
        run_id INTEGER NOT NULL REFERENCES runs(id),
        person_key TEXT NOT NULL,
        quiz_id TEXT NOT NULL,
        PRIMARY KEY (assignment_id, run_id)
    ) WITHOUT ROWID;
    CREATE INDEX assignment_runs_person ON assignment_runs(person_key);
    CREATE TABLE assignment_reminders (
        assignment_id INTEGER NOT NULL REFERENCES assignments(id),
        person_key TEXT NOT NULL,
        claimed_at INTEGER NOT NULL,
        sent_at INTEGER,
        PRIMARY KEY (assignment_id, person_key)
    ) WITHOUT ROWID;
    CREATE INDEX assignment_reminders_unsent ON assignment_reminders(claimed_at)
        WHERE sent_at IS NULL;
    """,
    # review tuned to each person (bot/storage/fsrs_params.py): a person's fitted FSRS
    # parameters (JSON; NULL: the defaults stay) and the fit's held-out figures
    """
    CREATE TABLE review_params (
        person_key TEXT PRIMARY KEY,
        parameters TEXT,
        reviews INTEGER NOT NULL,
        items INTEGER NOT NULL,
        fitted_at INTEGER NOT NULL,
        default_loss REAL,
        fitted_loss REAL,
        default_rmse REAL,
        fitted_rmse REAL
    ) WITHOUT ROWID;
    """,
    # questions at the right difficulty (bot/storage/difficulty.py): each question's Elo
    # difficulty, each person's ability and first answers (what their concept abilities are
    # replayed from); difficulty_pending: the answers stored before are replayed at open
    """
    CREATE TABLE difficulty_questions (
        quiz_id TEXT NOT NULL,
        question_id TEXT NOT NULL,
        difficulty REAL NOT NULL,
        answers INTEGER NOT NULL,
        PRIMARY KEY (quiz_id, question_id)
    ) WITHOUT ROWID;
    CREATE TABLE difficulty_people (
        person_key TEXT PRIMARY KEY,
        ability REAL NOT NULL,
        answers INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE difficulty_firsts (
        person_key TEXT NOT NULL,
        quiz_id TEXT NOT NULL,
        question_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        logit REAL NOT NULL,
        correct INTEGER NOT NULL,
        PRIMARY KEY (person_key, quiz_id, question_id)
    ) WITHOUT ROWID;
    CREATE TABLE difficulty_pending (id INTEGER PRIMARY KEY);
    INSERT INTO difficulty_pending(id) SELECT 1 WHERE EXISTS (SELECT 1 FROM answers);
    """,
    # a bot token's send budget shared by the processes on it (bot/storage/token_budget.py):
    # the time of its next free send slot
    """
    CREATE TABLE send_budgets (
        name TEXT PRIMARY KEY,
        next_at REAL NOT NULL
    ) WITHOUT ROWID;
    """,
    # a chat's target success rate for someone alone's next question (chat_settings.py)
    """
    ALTER TABLE chat_settings ADD COLUMN target INTEGER;
    """,
    # a live session's lobby message, edited when it ends; each player's platform language
    # (their rank, told privately, in it)
    """
    ALTER TABLE live_sessions ADD COLUMN lobby_ref TEXT;
    ALTER TABLE live_players ADD COLUMN locale TEXT;
    """,
]


def migrate(db: sqlite3.Connection, application_id: int) -> None:
    """Bring the file to the newest schema in one transaction and mark it as ours."""
    db.execute("BEGIN IMMEDIATE")  # one process migrates, others wait
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        db.execute(f"PRAGMA application_id={application_id}")  # ours from now on
        for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
            for statement in split_sql(script):
                db.execute(statement)
            db.execute(f"PRAGMA user_version={number}")
        db.execute("COMMIT")
        if version < len(MIGRATIONS):  # one line, however many steps
            if version:
                log.info("database schema migrated from version %d to %d", version,
                         len(MIGRATIONS))
            else:
                log.info("database schema created (version %d)", len(MIGRATIONS))
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def split_sql(script: str) -> list[str]:
    """Split a migration into statements; sqlite3 knows where a trigger body ends."""
    statements: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        if not buffer and (not line.strip() or line.strip().startswith("--")):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        raise ValueError(f"incomplete statement in migration: {buffer[:80]!r}")
    return statements


def version_of(path: Path) -> int:
    """A file's schema version, read without writing; 0 for none (opening says what is wrong
    with a file that is not a database)."""
    if not path.is_file():
        return 0
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            return int(db.execute("PRAGMA user_version").fetchone()[0])
    except sqlite3.Error:
        return 0
