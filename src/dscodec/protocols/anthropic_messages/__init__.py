"""The Anthropic Messages protocol (behavior.md#messages); its requests keep nothing for the writer."""
