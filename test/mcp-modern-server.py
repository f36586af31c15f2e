#!/usr/bin/env python3
"""A stateless-era (2026-07-28) MCP server for toolspec-mcp's tests.

Usage: mcp-modern-server.py [--http PORT]

Built on the Python MCP SDK's public API (MCPServer, Resolve, Elicit,
Sample): the SDK answers a call that needs the user's input with an
`input_required` result and resumes when the client retries with its
answers.  Tools:

  profile()      asks "Tell me about you" (name, color, count, ok, note)
                 and answers with the outcome as JSON text:
                 {"action": ..., "data": {...}}
  haiku(topic)   asks the client's model for a haiku on TOPIC and
                 answers "haiku: TEXT (model MODEL)"
  card()         asks the profile, then (a second round) the model for
                 a greeting to the name given; answers "card for NAME: TEXT"
  grow()         adds the tool extra() ("extra ran") and tells the
                 clients listening with subscriptions/listen
"""
import json
import sys
from typing import Annotated, Literal

from mcp.server.mcpserver import (
    Context,
    Elicit,
    ElicitationResult,
    MCPServer,
    Resolve,
    Sample,
)
from mcp_types import CreateMessageResult, SamplingMessage, TextContent
from pydantic import BaseModel, Field


class Profile(BaseModel):
    name: str = Field(title="Name")
    color: Literal["red", "green", "blue"] = "green"
    count: int = Field(default=3, ge=1)
    ok: bool | None = None
    note: str | None = None


app = MCPServer("toolspec-modern-test")


def ask_profile() -> Elicit[Profile]:
    return Elicit("Tell me about you", Profile)


def ask_haiku(topic: str) -> Sample:
    return Sample([SamplingMessage(role="user", content=TextContent(type="text", text=f"A haiku on {topic}"))],
                  max_tokens=40, system_prompt="You are a poet.")


def ask_greeting(who: Annotated[Profile, Resolve(ask_profile)]) -> Sample:
    return Sample([SamplingMessage(role="user", content=TextContent(type="text", text=f"Greet {who.name}"))],
                  max_tokens=30)


def text_of(result: CreateMessageResult) -> str:
    content = result.content
    return content.text if isinstance(content, TextContent) else str(content)


@app.tool()
def profile(answer: Annotated[ElicitationResult[Profile], Resolve(ask_profile)]) -> str:
    """Ask the user about themselves."""
    data = answer.data.model_dump(exclude_none=True) if answer.action == "accept" else None
    return json.dumps({"action": answer.action, "data": data})


@app.tool()
def haiku(topic: str, poem: Annotated[CreateMessageResult, Resolve(ask_haiku)]) -> str:
    """Ask the client's model for a haiku."""
    return f"haiku: {text_of(poem)} (model {poem.model})"


@app.tool()
def card(who: Annotated[Profile, Resolve(ask_profile)],
         greeting: Annotated[CreateMessageResult, Resolve(ask_greeting)]) -> str:
    """Ask the user's name, then the model for a greeting."""
    return f"card for {who.name}: {text_of(greeting)}"


def extra() -> str:
    """Added by grow."""
    return "extra ran"


@app.tool()
async def grow(ctx: Context) -> str:
    """Add the tool extra."""
    app.add_tool(extra)
    await ctx.notify_tools_changed()
    return "grown"


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        app.run()
