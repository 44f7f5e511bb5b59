// Aether's mod: where Claude Code loads plugin code, the /ant:* commands the helper can serve run
// here — no model turn for the loop. It asks `aether mod serve` how to serve a command: with the
// helper's text, with the loop (spawn every ant of an action at once, record each answer as it
// arrives, ask again), or by the markdown command (`next(e)`), which is also the fallback wherever
// this module does not load. Every rule, number and text comes from the helper; this file only
// runs the loop and draws. See docs/decisions/the-mod-runs-the-loop.md.
import type { Register } from 'claude-code'

type Json = any // the helper's JSON, shaped in docs/contracts.md ("The mod's calls")

const HELPER_MS = 120000 // the longest a helper call may take (a wait returns within seconds)
const MAX_STEPS = 100000 // a bound on the loop: the helper ends every run long before
const ANSWER_TRIES = 3 // an answer the helper could not take (its lock busy) is sent again, a second apart

const AGENT_MESSAGE = /<agent-message from="([^"<>]{1,120})">/g // Claude Code's hand-back delivery

const refOf: Record<string, string> = {} // Claude Code's agent id → the spawn it runs
const TAIL_CHARS = 4000 // of a call's output handed to the helper (it keeps less)
const callsOf: Record<string, Json[]> = {} // the calls of the mod's ants not handed to the helper yet

// The calls of these agents (all, when none named), taken: the helper keeps them as evidence.
function takeCalls(ids?: string[]): Record<string, Json[]> {
  const taken: Record<string, Json[]> = {}
  for (const id of ids ?? Object.keys(callsOf)) {
    if (callsOf[id]?.length) taken[id] = callsOf[id]
    delete callsOf[id]
  }
  return taken
}

class HelperError extends Error {}

async function aether($: Json, env: Record<string, string>, args: string[], input: Json, timeoutMs = HELPER_MS): Promise<Json> {
  const root = env.CLAUDE_PLUGIN_ROOT
  const ran = await $.process.run([`${root}/bin/aether`, ...args], { env, stdin: JSON.stringify(input), timeoutMs })
  let body: Json
  try { body = JSON.parse(ran.stdout) } catch { body = undefined }
  if (ran.exitCode === 0 && body && body.ok) return body.result
  let failure: Json
  try { failure = JSON.parse(ran.stderr) } catch { failure = undefined }
  throw new HelperError(failure && failure.error ? String(failure.error) : (ran.stderr.trim() || `aether exited with ${ran.exitCode}`))
}

// Is this agent one of the mod's ants? Its first call may come before the spawn call resolved:
// Claude Code's list says who spawned it (asked once per agent).
const spawnedHere: Record<string, boolean> = {}
async function ownAnt($: Json, id: string): Promise<boolean> {
  if (refOf[id] !== undefined) return true
  spawnedHere[id] ??= await ours($, id)
  return spawnedHere[id]
}

// Is this agent one the plugin spawned? (Claude Code's own list says who spawned it.)
async function ours($: Json, id: string): Promise<boolean> {
  const listed: Json[] = await $.agent.list().catch(() => [])
  return listed.some((a: Json) => a.id === id && a.spawnedBy === $.plugin.name)
}

export const register: Register = on => {
  // Every answer of the mod's ants goes to the helper: by its spawn when the mod knows it, else by
  // its agent (an answer that came before the spawn call resolved, or after the mod was interrupted).
  on('turn.complete', async ($: Json, e: Json, next: Json) => {
    const result = await next(e)
    if (!e.agentId) return result
    const ref = refOf[e.agentId]
    if (ref === undefined && !(await ours($, e.agentId))) return result
    delete refOf[e.agentId]
    const env = await $.process.hookEnv()
    const calls = takeCalls([e.agentId])[e.agentId] ?? []
    const answer = { ref, agent_id: e.agentId, text: e.answer ?? '', usage: e.usage ?? {}, duration_ms: e.durationMs, reason: e.reason, calls }
    for (let attempt = 1; attempt <= ANSWER_TRIES; attempt++) {
      try {
        await aether($, env, ['mod', 'answer'], answer)
        break
      } catch {
        if (attempt < ANSWER_TRIES) await $.clock.sleep(1000) // not taken: Claude Code's agent list hands the ant out again
      }
    }
    return result
  })

  // What the mod's ants run and write: each call's essentials, handed to the helper with the next
  // wait or the ant's answer (scripts/aether/state/evidence.py keeps them, bounded).
  on('tool.call', async ($: Json, e: Json, next: Json) => {
    if (!e.agentId || !(await ownAnt($, e.agentId))) return next(e)
    const started = await $.clock.now()
    const result = await next(e)
    const ended = await $.clock.now()
    const text = String(result?.text ?? '')
    ;(callsOf[e.agentId] ??= []).push({
      id: e.tool_use_id,
      tool: e.tool,
      input: { command: e.command, file_path: e.file_path, notebook_path: e.notebook_path, run_in_background: e.run_in_background },
      refused: !result || result.deny !== undefined, // denied or cut off: it did not run to an exit status
      isError: result?.isError === true,
      text: text.length > TAIL_CHARS ? text.slice(-TAIL_CHARS) : text,
      ms: ended - started,
      t: ended / 1000,
    })
    return result
  })

  // In an interactive session an ant hands its report back through SubagentHandback, and Claude
  // Code also queues it for the main conversation as a message — a Queen turn. turn.complete
  // brought the report here already: a message that only carries the mod's own ants' reports is
  // dropped before it starts a turn (the session shows one line for it).
  on('prompt.submit', async ($: Json, e: Json, next: Json) =>
    (await onlyOurReports($, e.text)) ? { drop: "Aether recorded this ant's report" } : next(e),
  )

  on('command.run', { command: /^ant:/ }, async ($: Json, e: Json, next: Json) => {
    let env: Record<string, string>
    let served: Json
    try {
      env = await $.process.hookEnv()
      served = await aether($, env, ['mod', 'serve'], { command: e.command, args: e.args })
    } catch {
      return next(e) // the helper is not ready here: the markdown command serves it
    }
    if (served.serve === 'text') return { text: served.text, exitCode: served.exit_code }
    if (served.serve !== 'loop') return next(e)
    return loop($, env, served.action, next.signal)
  }).catch(($: Json, e: Json, next: Json) => next(e)) // the loop failed: the markdown command goes on from state
}

// Does `text` carry hand-back reports, and only from ants this plugin spawned (named as spawned)?
async function onlyOurReports($: Json, text: unknown): Promise<boolean> {
  const senders = [...String(text ?? '').matchAll(AGENT_MESSAGE)].map(m => String(m[1]))
  if (senders.length === 0) return false
  const listed: Json[] = await $.agent.list().catch(() => [])
  return senders.every(name => listed.some((a: Json) => (a.name === name || a.id === name) && a.spawnedBy === $.plugin.name))
}

async function loop($: Json, env: Record<string, string>, first: Json, signal: AbortSignal): Promise<Json> {
  const headless = (await $.session.surfaces()).length === 0
  const say = async (line: string | null | undefined) => {
    if (headless && line) await $.fs.write('/dev/stderr', `aether: ${line}\n`).catch(() => undefined)
  }
  const draw = (progress: string | undefined) => {
    if (!headless) $.ui.status(progress || undefined)
  }
  let action = first
  try {
    for (let step = 0; step < MAX_STEPS; step++) {
      draw(action.progress)
      await say(action.line)
      if (signal.aborted) return interrupted(action)
      if (action.action === 'spawn') {
        const sent = await Promise.all(action.spawns.map((s: Json) => spawn($, s)))
        const told = await aether($, env, ['mod', 'launched'], { spawns: sent })
        draw(told.progress)
        for (const line of told.lines ?? []) await say(line)
        action = await aether($, env, ['mod', 'wait'], { refs: sent.map((s: Json) => s.ref), calls: takeCalls() })
      } else if (action.action === 'wait') {
        const statuses = await agentStatuses($, action.agents ?? {})
        action = await aether($, env, ['mod', 'wait'], { refs: action.refs, statuses, calls: takeCalls() })
      } else {
        draw(undefined)
        return { text: action.text, exitCode: action.exit_code }
      }
    }
    return { text: 'Aether: the loop did not end; `aether next` says where the run stands.', exitCode: 1 }
  } catch (err) {
    draw(undefined)
    if (signal.aborted) return interrupted(action)
    return { text: `Aether: ${err instanceof Error ? err.message : String(err)}`, exitCode: 1 }
  }
}

// Start one ant; {ref, agent_id} when it runs, {ref, why} when Claude Code refused it.
async function spawn($: Json, s: Json): Promise<Json> {
  const request: Json = { prompt: s.prompt, subagentType: s.subagent_type, description: s.description, name: s.id }
  if (s.model) request.model = s.model
  try {
    const started = await $.agent.spawn(request)
    if (!started.agentId) return { ref: s.ref, why: String(started.deny ?? 'not started') }
    refOf[started.agentId] = s.ref
    return { ref: s.ref, agent_id: started.agentId }
  } catch (err) {
    return { ref: s.ref, why: err instanceof Error ? err.message : String(err) }
  }
}

// Claude Code's word on the agents the helper waits for ({agent id: status, or null when not
// listed}); the helper decides what an ant that ended without its answer means. No list: no word.
async function agentStatuses($: Json, agents: Record<string, string>): Promise<Json> {
  const ids = Object.values(agents).filter(Boolean)
  if (ids.length === 0) return {}
  let listed: Json[]
  try {
    listed = await $.agent.list()
  } catch {
    return {}
  }
  return Object.fromEntries(ids.map(id => [id, listed.find((a: Json) => a.id === id)?.status ?? null]))
}

// Interrupted (Esc): Claude Code runs no more of this hook's calls, so the helper said in advance
// what to show; the ants already running finish and turn.complete records their answers.
function interrupted(action: Json): Json {
  const said = action.interrupt ?? { text: 'Aether: interrupted.', exit_code: 1 }
  return { text: said.text, exitCode: said.exit_code }
}
