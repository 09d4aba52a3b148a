"""Installs the test network guard in every Python child process a test starts (see
research_netguard)."""

import research_netguard

research_netguard.install()
