"""The organiser's web dashboard: one chat's results, people, questions, reports, settings and
exports, server-rendered by the bot process (aiohttp, Jinja2), opened through `/dashboard`'s
signed links (bot/core/dashboard.py). See docs/dashboard.md."""
