"""The platform-free domain: quizzes, posts, answers, runs, leaderboards, locales."""
