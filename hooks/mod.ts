// Aether's mod: where Claude Code loads plugin code, the /ant:* commands the helper can serve run
// here — no model turn for the loop. It asks `aether mod serve` how to serve a command: with the
// helper's text, with the loop (spawn every ant of an action at once, record each answer as it
// arrives, ask again), or by the markdown command (`next(e)`), which is also the fallback wherever
// this module does not load. Every rule, number and text comes from the helper; this file only
// runs the loop and draws. See docs/decisions/the-mod-runs-the-loop.md.
import type { AgentInfo, AgentStatus, CommandRunResult, EngineInterface, Register } from 'claude-code'
import type {
  Action,
  AnswerInput,
  Answered,
  Call,
  Interrupt,
  Launch,
  Launched,
  LaunchedInput,
  Served,
  ServeInput,
  Spawn,
  Stopped,
  WaitInput,
} from './types.ts'
import { forgetCaller, guardFailed, guardHook, noteCaller } from './mod_guard'

const HELPER_MS = 120000 // the longest a helper call may take (a wait returns within seconds)
const MAX_STEPS = 100000 // a bound on the loop: the helper ends every run long before
const HELPER_TRIES = 5 // a helper call that failed, tried again this many times once no ant of the loop runs
const RETRY_SECONDS = [1, 2, 4, 8] // the pause before each try again (the last repeats)
const RUNNING_POLL_SECONDS = 5 // while ants of the loop still run, a failing helper is asked again this often

const AGENT_MESSAGE = /<agent-message from="([^"<>]{1,120})">/g // Claude Code's hand-back delivery
const TASK_NOTIFICATION = /<task-notification>\s*<task-id>([^<>\s]{1,120})<\/task-id>/g // a background agent's end, by agent id

const refOf: Record<string, string> = {} // Claude Code's agent id → the spawn it runs (until its answer came)
const sentHere = new Set<string>() // the names and agent ids of every ant this mod spawned in this session
const TAIL_CHARS = 4000 // of a call's output handed to the helper (it keeps less)
const callsOf: Record<string, Call[]> = {} // the calls of the mod's ants not handed to the helper yet
let spoolDir: string | undefined // where an answer waits until the helper took it (`aether mod serve` says)
let lastEnd: string | undefined // the text a headless loop ended with (see prompt.submit)

// The calls of these agents (all, when none named), taken: the helper keeps them as evidence.
function takeCalls(ids?: string[]): Record<string, Call[]> {
  const taken: Record<string, Call[]> = {}
  for (const id of ids ?? Object.keys(callsOf)) {
    const calls = callsOf[id]
    if (calls?.length) taken[id] = calls
    delete callsOf[id]
  }
  return taken
}

// Calls a helper call did not take go back, before any that came meanwhile.
function putBack(taken: Record<string, Call[]>): void {
  for (const [id, calls] of Object.entries(taken)) callsOf[id] = [...calls, ...(callsOf[id] ?? [])]
}

class HelperError extends Error {}

// The helper's JSON as parsed: a value nothing has checked yet (the envelope is checked below).
function parsed(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

// One field of a parsed JSON object, if it is one.
function fieldOf(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined
}

// The one place the helper's JSON becomes a typed answer: an `{ok: true, result}` envelope's
// result is the shape `T` the helper declares for the step (hooks/types.ts, held against the
// helper by tests/test_mod_types.py).
async function aether<T>($: EngineInterface, env: Record<string, string>, args: string[], input: object, timeoutMs = HELPER_MS): Promise<T> {
  const root = env.CLAUDE_PLUGIN_ROOT
  const ran = await $.process.run([`${root}/bin/aether`, ...args], { env, stdin: JSON.stringify(input), timeoutMs })
  const body = parsed(ran.stdout)
  if (ran.exitCode === 0 && fieldOf(body, 'ok') === true) return fieldOf(body, 'result') as T
  const error = fieldOf(parsed(ran.stderr), 'error')
  if (error) throw new HelperError(String(error))
  const said = String(ran.stderr || ran.stdout || '').trim().slice(0, 300)
  throw new HelperError(`\`aether ${args.join(' ')}\` gave no answer (exit ${ran.exitCode})${said ? `: ${said}` : ''}`)
}

// A pause that costs the hook none of its own time (a `$.clock` wait would): a sleeping process.
async function pause($: EngineInterface, seconds: number): Promise<void> {
  await $.process.run(['sleep', String(seconds)], { timeoutMs: (seconds + 5) * 1000 }).catch(() => undefined)
}

// Do ants this loop started still run (no answer has come for them yet)?
function stillRunning(mine: Set<string>): boolean {
  return Object.keys(refOf).some(id => mine.has(id))
}

// A helper call of the loop that outlives a failing helper: while the loop's ants run it is asked
// again and again (their answers are kept meanwhile, see `deliver`); then HELPER_TRIES times more;
// only then does the error stand. Nothing is abandoned while an ant runs.
async function steady<T>(
  $: EngineInterface,
  env: Record<string, string>,
  args: string[],
  input: object,
  mine: Set<string>,
  signal: AbortSignal,
): Promise<T> {
  let tries = 0
  for (;;) {
    try {
      return await aether<T>($, env, args, input)
    } catch (err) {
      if (signal.aborted) throw err
      if (stillRunning(mine)) {
        await pause($, RUNNING_POLL_SECONDS)
        continue
      }
      if (tries >= HELPER_TRIES) throw err
      await pause($, RETRY_SECONDS[Math.min(tries, RETRY_SECONDS.length - 1)] ?? 1)
      tries += 1
    }
  }
}

// An answer is kept on disk first, then handed to the helper, which takes the kept copy away
// once recorded; one the helper could not take is recorded by its next call, whichever it is.
async function deliver($: EngineInterface, env: Record<string, string>, answer: AnswerInput): Promise<void> {
  if (spoolDir) await keep($, `${spoolDir}/${answer.agent_id}.json`, JSON.stringify(answer))
  for (let attempt = 1; attempt <= 2; attempt++) {
    try {
      await aether<Answered>($, env, ['mod', 'answer'], answer)
      return
    } catch {
      if (attempt < 2) await pause($, 1)
    }
  }
}

// A whole file or none, whatever stops midway: written beside it, then renamed (`$.fs` has no rename).
async function keep($: EngineInterface, file: string, text: string): Promise<void> {
  const script = 'cat > "$1.tmp" && mv -f "$1.tmp" "$1"'
  await $.process.run(['sh', '-c', script, 'sh', file], { stdin: text, timeoutMs: 30000 }).catch(() => undefined)
}

// What an ant that ended on an API error met: its last message is Claude Code's error line
// (`API Error: Request rejected (429) · …`); a subscriber's rate-limit windows say when they reset.
async function weatherOf($: EngineInterface, agentId: string): Promise<Pick<AnswerInput, 'error' | 'rate_limits'>> {
  const read = await $.session.messages({ agentId, last: 3 }).catch(() => [])
  const rows = Array.isArray(read) ? read : [] // a refused read is `{deny}`, no rows
  const said = [...rows].reverse().find(m => m.role === 'assistant' && String(m.text ?? '').trim())
  const usage = await $.session.usage().catch(() => undefined)
  return { error: said ? String(said.text) : '', rate_limits: Array.isArray(usage?.rateLimits) ? usage.rateLimits : [] }
}

// Is this agent one of the mod's ants? Its first call may come before the spawn call resolved:
// Claude Code's list says who spawned it (asked once per agent).
const spawnedHere: Record<string, boolean> = {}
async function ownAnt($: EngineInterface, id: string): Promise<boolean> {
  if (refOf[id] !== undefined) return true
  return (spawnedHere[id] ??= await ours($, id))
}

// Is this agent one the plugin spawned? (Claude Code's own list says who spawned it.)
async function ours($: EngineInterface, id: string): Promise<boolean> {
  const listed = await listAgents($)
  return listed.some(a => a.id === id && a.spawnedBy === $.plugin.name)
}

// Claude Code's list of agents; none when it cannot say.
async function listAgents($: EngineInterface): Promise<AgentInfo[]> {
  return $.agent.list().catch(() => [])
}

export const register: Register = on => {
  // Every answer of the mod's ants goes to the helper: by its spawn when the mod knows it, else by
  // its agent (an answer that came before the spawn call resolved, or after the mod was interrupted).
  on('turn.complete', async ($, e, next) => {
    const result = await next(e)
    if (!e.agentId) return result
    const ref = refOf[e.agentId]
    if (ref === undefined && !(await ours($, e.agentId))) return result
    const env = await $.process.hookEnv()
    const calls = takeCalls([e.agentId])[e.agentId] ?? []
    const answer: AnswerInput = { ref, agent_id: e.agentId, text: e.answer ?? '', usage: e.usage ?? {}, duration_ms: e.durationMs, reason: e.reason, calls }
    if (e.reason === 'error') Object.assign(answer, await weatherOf($, e.agentId))
    // who stopped an aborted ant: Claude Code lists it `failed` (its watchdog: stalled) or `killed` (a stop)
    if (e.reason === 'aborted') answer.status = (await agentStatuses($, { [e.agentId]: e.agentId }))[e.agentId] ?? null
    await deliver($, env, answer)
    delete refOf[e.agentId] // its answer is kept: the loop no longer waits for it
    return result
  })

  // What the mod's ants run and write: each call's essentials, handed to the helper with the next
  // wait or the ant's answer (scripts/aether/state/evidence.py keeps them, bounded).
  on('tool.call', async ($, e, next) => {
    if (!e.agentId) return next(e)
    noteCaller(e.tool_use_id, e.agentId) // for the guard, beneath in classic.PreToolUse
    let took: number | undefined
    try {
      if (!(await ownAnt($, e.agentId))) return await next(e)
      const started = await $.clock.now()
      const result = await next(e)
      const ended = await $.clock.now()
      took = forgetCaller(e.tool_use_id)
      const text = String(result?.text ?? '')
      const input: Readonly<Record<string, unknown>> = e // the fields of its tool's input, whichever tool it is
      ;(callsOf[e.agentId] ??= []).push({
        id: e.tool_use_id,
        tool: e.tool,
        input: { command: input.command, file_path: input.file_path, notebook_path: input.notebook_path, run_in_background: input.run_in_background },
        refused: !result || result.deny !== undefined, // denied or cut off: it did not run to an exit status
        isError: result?.isError === true,
        text: text.length > TAIL_CHARS ? text.slice(-TAIL_CHARS) : text,
        ms: ended - started,
        t: ended / 1000,
        ...(took !== undefined ? { hooks_ms: took } : {}),
      })
      return result
    } finally {
      if (took === undefined) forgetCaller(e.tool_use_id)
    }
  })

  // The guard, judged here rather than by a Python start per call (hooks/mod_guard.ts).
  on('classic.PreToolUse', guardHook).catch(($, e, next) => guardFailed(e) ?? next(e))

  // In an interactive session an ant hands its report back through SubagentHandback, and Claude
  // Code also queues it for the main conversation as a message — a Queen turn; a task
  // notification of a mod's ant that comes once the loop has stopped would start one too.
  // turn.complete brought the report here already: a message that only carries the mod's own
  // ants' reports is dropped before it starts a turn (the session shows one line for it). Under
  // -p a dropped prompt's reason is what the run prints last: there it is the loop's own end.
  on('prompt.submit', async ($, e, next) =>
    (await onlyOurReports($, e.text)) ? { drop: lastEnd ?? "Aether recorded this ant's report" } : next(e),
  )

  on('command.run', { command: /^ant:/ }, async ($, e, next) => {
    let env: Record<string, string>
    let served: Served
    try {
      env = await $.process.hookEnv()
      const asked: ServeInput = { command: e.command, args: e.args }
      served = await aether<Served>($, env, ['mod', 'serve'], asked)
    } catch {
      return next(e) // the helper is not ready here: the markdown command serves it
    }
    if (served.serve === 'text') return { text: served.text, exitCode: served.exit_code }
    if (served.serve !== 'loop') return next(e)
    if (typeof served.spool === 'string') spoolDir = served.spool
    return loop($, env, served.action, next.signal)
  }).catch(($, e, next) => next(e)) // the loop failed: the markdown command goes on from state
}

// Does `text` carry hand-back reports or task notifications, and only of ants this plugin spawned?
// Claude Code's list says who spawned an agent while it keeps it; a report delivered after a long
// command (a run that waited hours) may come once the list has dropped its agent: the names and
// agent ids this mod gave count then.
async function onlyOurReports($: EngineInterface, text: unknown): Promise<boolean> {
  const said = String(text ?? '')
  const senders = [...said.matchAll(AGENT_MESSAGE), ...said.matchAll(TASK_NOTIFICATION)].map(m => String(m[1]))
  if (senders.length === 0) return false
  const listed = await listAgents($)
  return senders.every(name => {
    const agents = listed.filter(a => a.name === name || a.id === name)
    if (agents.length > 0) return agents.every(a => a.spawnedBy === $.plugin.name)
    return sentHere.has(name)
  })
}

async function loop($: EngineInterface, env: Record<string, string>, first: Action, signal: AbortSignal): Promise<CommandRunResult> {
  const headless = (await $.session.surfaces()).length === 0
  const say = async (line: string | null | undefined) => {
    if (headless && line) await $.fs.write('/dev/stderr', `aether: ${line}\n`).catch(() => undefined)
  }
  const draw = (progress: string | undefined) => {
    if (!headless) $.ui.status(progress || undefined)
  }
  lastEnd = undefined // a new command: its own end, once it comes
  const end = (out: CommandRunResult): CommandRunResult => {
    // said again should a late report be dropped (one line: a reason's line breaks do not survive)
    if (headless && out.text) lastEnd = String(out.text).replace(/\s*\n\s*/g, ' ').trim()
    return out
  }
  const mine = new Set<string>() // the agents this loop started
  let serial = 0 // names each helper call of the loop: asked again after a failure, it is the same call
  const loopId = Math.random().toString(36).slice(2, 10)
  const named = (step: string): string => `${step}-${loopId}-${++serial}`
  const wait = async (input: Omit<WaitInput, 'calls' | 'call'>): Promise<Action> => {
    const calls = takeCalls()
    try {
      const asked: WaitInput = { ...input, calls, call: named('wait') }
      return await steady<Action>($, env, ['mod', 'wait'], asked, mine, signal)
    } catch (err) {
      putBack(calls)
      throw err
    }
  }
  let action: Action = first
  let warned = '' // a safety net the build goes without, said once (the status line keeps showing it)
  try {
    for (let step = 0; step < MAX_STEPS; step++) {
      draw(action.progress)
      await say(action.line)
      if (action.warning && action.warning !== warned) {
        warned = action.warning
        await say(action.warning)
      }
      if (signal.aborted) return end(interrupted(action))
      if (action.action === 'spawn') {
        const sent = await Promise.all(action.spawns.map(s => spawn($, s)))
        for (const s of sent) if (s.agent_id) mine.add(s.agent_id)
        const launched: LaunchedInput = { spawns: sent, call: named('launched') }
        const told = await steady<Launched>($, env, ['mod', 'launched'], launched, mine, signal)
        draw(told.progress)
        for (const line of told.lines ?? []) await say(line)
        action = await wait({ refs: sent.map(s => s.ref), scope: action.run })
      } else if (action.action === 'wait') {
        const stopped = await stopAgents($, action.stop ?? [])
        const statuses = await agentStatuses($, action.agents ?? {})
        action = await wait({ refs: action.refs, scope: action.run, statuses, stopped })
      } else {
        draw(undefined)
        return end({ text: action.text, exitCode: action.exit_code })
      }
    }
    return end({ text: 'Aether: the loop did not end; `aether next` says where the run stands.', exitCode: 1 })
  } catch (err) {
    draw(undefined)
    return end(signal.aborted ? interrupted(action) : failed(action, err))
  }
}

// The helper failed and went on failing once no ant of the loop ran: what happened, what is kept,
// and the command that goes on (the helper said it in advance, with each action).
function failed(action: Action, err: unknown): CommandRunResult {
  const why = err instanceof Error ? err.message : String(err)
  const again = 'again' in action && action.again ? `run ${action.again}` : 'run the same command'
  return {
    text:
      `Aether: the helper failed, and still failed after ${HELPER_TRIES} more tries: ${why}\n` +
      `No ant of this command is running now. The answers of those that finished are kept ` +
      `(${spoolDir ?? '.aether/data/spool'}) and are recorded before anything else by the next command: ` +
      `nothing finished runs again. Once \`aether status\` answers again, ${again}.`,
    exitCode: 1,
  }
}

// Start one ant; {ref, agent_id} when it runs, {ref, why} when Claude Code refused it.
async function spawn($: EngineInterface, s: Spawn): Promise<Launch> {
  const request = { prompt: s.prompt, subagentType: s.subagent_type, description: s.description, name: s.id, ...(s.model ? { model: s.model } : {}) }
  sentHere.add(s.id) // the name its hand-back will come under
  try {
    const started = await $.agent.spawn(request)
    if (!started.agentId) return { ref: s.ref, why: String(started.deny ?? 'not started') }
    refOf[started.agentId] = s.ref
    sentHere.add(started.agentId)
    return { ref: s.ref, agent_id: started.agentId }
  } catch (err) {
    return { ref: s.ref, why: err instanceof Error ? err.message : String(err) }
  }
}

// Claude Code's word on the agents the helper waits for ({agent id: status, or null when not
// listed}); the helper decides what an ant that ended without its answer means. No list: no word.
async function agentStatuses($: EngineInterface, agents: Record<string, string | null>): Promise<Record<string, AgentStatus | null>> {
  const ids = Object.values(agents).filter((id): id is string => Boolean(id))
  if (ids.length === 0) return {}
  let listed: AgentInfo[]
  try {
    listed = await $.agent.list()
  } catch {
    return {}
  }
  return Object.fromEntries(ids.map(id => [id, listed.find(a => a.id === id)?.status ?? null]))
}

// Stop the agents the helper found past their deadline. The mods API has no agent stop: Claude
// Code's TaskStop tool stops a background agent (its turn.complete then comes `aborted`). What
// each stop did goes back to the helper, which hands a stopped ant out once more and never one
// whose stop failed while it may still run.
async function stopAgents($: EngineInterface, ids: string[]): Promise<Stopped[]> {
  const done: Stopped[] = []
  for (const id of ids) {
    try {
      const ran = await $.tool.call({ tool: 'TaskStop', task_id: id })
      const ok = ran?.deny === undefined && ran?.isError !== true
      done.push({ agent_id: id, ok, text: String(ran?.deny ?? ran?.text ?? '').slice(0, 300) })
    } catch (err) {
      done.push({ agent_id: id, ok: false, text: err instanceof Error ? err.message : String(err) })
    }
  }
  return done
}

// Interrupted (Esc): Claude Code runs no more of this hook's calls, so the helper said in advance
// what to show; the ants already running finish and turn.complete records their answers.
function interrupted(action: Action): CommandRunResult {
  const said: Interrupt = ('interrupt' in action ? action.interrupt : undefined) ?? { text: 'Aether: interrupted.', exit_code: 1 }
  return { text: said.text, exitCode: said.exit_code }
}
