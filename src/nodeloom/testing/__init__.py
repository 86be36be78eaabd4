"""What tests (ours, and those of node packages) use to exercise nodeloom for real.

    mock_llm   a scripted, OpenAI-compatible LLM served over real HTTP, with pytest fixtures
    builders   graph(), node(), edge(), chain(): graph documents in a line each
    context    a FlowContext for calling one executor directly
    events     picking events out of a run's event list
    stores     a throwaway Postgres cluster and fresh databases, with pytest fixtures;
               a throwaway MariaDB server (stores.mariadb)
    smtp       a real SMTP server on loopback with TLS and a login (needs aiosmtpd)
    browser    the Chromium the web UI's end-to-end tests drive

See docs/testing.md.
"""
