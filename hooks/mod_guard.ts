// The guard, answered in Claude Code's own process: where the mod loads, every Bash and file-tool
// call (the calls hooks/guard.sh would see) is judged by a guard that stays up for the session —
// `sh hooks/guard.sh --serve` (hooks/guard_serve.py), asked over a Unix socket — instead of a
// Python start per call. The same rules give the same answers (guard.judge); this file holds none
// of them. While that guard runs, hooks/guard.sh, still run by Claude Code beneath, steps aside
// (AETHER_MOD_GUARD). See docs/decisions/the-guard.md, "Under the mod".
import type { EngineInterface, Next, PreToolUseResult, ProcessSpawnResult, ToolCallEnvelope } from 'claude-code'
import type { GuardAnswer, GuardDecision, GuardStarted } from './types.ts'

const GUARDED = new Set(['Bash', 'Write', 'Edit', 'MultiEdit', 'NotebookEdit']) // hooks.json's matcher for guard.sh
const START_MS = 15000 // the longest the guard may take to start (Python and its shell parser)
const RESTART_AFTER_MS = 30000 // a guard that would not start, or ended, is started again after this long
const ENDED: ProcessSpawnResult = { code: null, signal: null } // what a stream closed early is told
const ASK_MS = 10000 // the longest one call's judgment may take, asked of either (guard.sh's own hook timeout)
const GUARD_FAILED =
  "Aether's guard could not judge this call (its process did not answer, nor did hooks/guard.sh run once). Stop, and say so in your result block."

const callers: Record<string, string> = {} // a call's tool_use_id → the agent making it (told to tool.call, not to classic.PreToolUse)
const hookMs: Record<string, number> = {} // a call's tool_use_id → the time its PreToolUse hooks took (this one and those beneath)
const typeOf: Record<string, string> = {} // an agent's id → its type (`ant:builder`), as Claude Code lists it
type Guard = GuardStarted & { nonce: string }
let running: Promise<Guard | undefined> | undefined // the guard that stays up, once asked for
let failedAt = -Infinity // when it last would not start, or ended
let generation = 0 // which start is the newest (an older guard's end changes nothing)
let hookEnv: Record<string, string> | undefined
let markdownAsked: boolean | undefined // AETHER_RUNTIME asks for the markdown commands and their shell hooks
const MARKDOWN = ['prompts', 'markdown', 'off'] // as scripts/aether/colony/mod_serve.py reads AETHER_RUNTIME

/** The agent that makes this call, for the guard to know (the classic hook's input names it). */
export function noteCaller(toolUseId: string, agentId: string | undefined): void {
  if (agentId) callers[toolUseId] = agentId
}

/** The call is over: what was noted of it goes; the time its PreToolUse hooks took, if measured. */
export function forgetCaller(toolUseId: string): number | undefined {
  const took = hookMs[toolUseId]
  delete callers[toolUseId]
  delete hookMs[toolUseId]
  return took
}

// The variables a command hook gets (the guard reads the project from them), once per session.
async function envOf($: EngineInterface): Promise<Record<string, string>> {
  hookEnv ??= await $.process.hookEnv()
  return hookEnv
}

// The guard that stays up: started once, its socket read from the first line it prints; started
// again after it ended. AETHER_MOD_GUARD tells hooks/guard.sh who judges while it runs. A token
// only the mod and the guard know (handed on its stdin) is in each of its answers: a process that
// took the socket's place cannot answer for it.
async function start($: EngineInterface, env: Record<string, string>): Promise<Guard | undefined> {
  const nonce = token()
  const mine = ++generation
  const child = $.process.spawn({ argv: ['sh', `${env.CLAUDE_PLUGIN_ROOT}/hooks/guard.sh`, '--serve'], env, input: `${nonce}\n` })
  let said = ''
  const waited = new AbortController()
  const timeout = $.clock.sleep(START_MS, { signal: waited.signal }).then(
    () => undefined,
    () => undefined,
  )
  try {
    while (!said.includes('\n')) {
      const piece = await Promise.race([child.next(), timeout])
      if (piece === undefined || piece.done) {
        await child.return(ENDED).catch(() => undefined) // ends the child, if it still runs
        return undefined
      }
      if (piece.value.stream === 'stdout') said += piece.value.text
    }
  } finally {
    waited.abort()
  }
  const started = parsedStart(said.slice(0, said.indexOf('\n')))
  if (!started || !env.CLAUDE_PID) {
    await child.return(ENDED).catch(() => undefined)
    return undefined
  }
  void (async () => {
    // the child's life: its output read to the end (it says nothing more), then forgotten
    for (;;) if ((await child.next().catch(() => ({ done: true as const, value: undefined }))).done) break
    if (generation !== mine) return
    running = undefined
    failedAt = await $.clock.now().catch(() => Date.now()) // started again only after a while: guard.sh judges meanwhile
    await $.env.set('AETHER_MOD_GUARD', undefined).catch(() => undefined) // (a guard that ended is not trusted by guard.sh anyway)
  })()
  await $.env.set('AETHER_MOD_GUARD', `${env.CLAUDE_PID} ${started.pid} ${started.socket}`)
  return { ...started, nonce }
}

// Hard to guess from outside Claude Code's process (no crypto API is declared for mods).
function token(): string {
  return Array.from({ length: 4 }, () => Math.random().toString(36).slice(2, 12)).join('')
}

// A guard that did not answer as it should is ended: guard.sh judges again, and it starts anew later.
async function stop($: EngineInterface, up: Guard): Promise<void> {
  running = undefined
  failedAt = await $.clock.now().catch(() => Date.now())
  await $.process.run(['kill', String(up.pid)], { timeoutMs: 5000 }).catch(() => undefined)
}

function parsedStart(line: string): GuardStarted | undefined {
  try {
    const value: unknown = JSON.parse(line)
    const { socket, pid } = (value ?? {}) as Partial<GuardStarted>
    return typeof socket === 'string' && typeof pid === 'number' ? { socket, pid } : undefined
  } catch {
    return undefined
  }
}

async function guardUp($: EngineInterface, env: Record<string, string>): Promise<Guard | undefined> {
  const now = await $.clock.now().catch(() => Date.now())
  if (running === undefined && now - failedAt >= RESTART_AFTER_MS) {
    // set before any other await: calls that come together start one guard
    running = start($, env).then(
      started => {
        if (started === undefined) [failedAt, running] = [now, undefined]
        return started
      },
      () => {
        ;[failedAt, running] = [now, undefined] // it could not start (refused, or no program): guard.sh judges
        return undefined
      },
    )
  }
  return running
}

// The hook's input as Claude Code hands it to guard.sh: what the guard reads of it.
async function hookInput($: EngineInterface, env: Record<string, string>, e: ToolCallEnvelope): Promise<Record<string, unknown>> {
  const { tool, tool_use_id: toolUseId, ...args } = e
  const agent = callers[toolUseId]
  const info = await $.session.info().catch(() => undefined)
  return {
    session_id: env.CLAUDE_CODE_SESSION_ID,
    transcript_path: info?.transcriptPath,
    cwd: await $.session.cwd().catch(() => undefined),
    hook_event_name: 'PreToolUse',
    tool_name: tool,
    tool_input: args,
    tool_use_id: toolUseId,
    ...(agent ? { agent_id: agent, agent_type: await agentType($, agent) } : info?.agentType ? { agent_type: info.agentType } : {}),
  }
}

// The agent's type as Claude Code lists it; unknown (the guard reads it from the agent's record
// beside the transcript) when the list does not say.
async function agentType($: EngineInterface, agent: string): Promise<string | undefined> {
  if (typeOf[agent] === undefined) {
    const listed = await $.agent.list().catch(() => [])
    for (const a of listed) if (a.type) typeOf[a.id] = a.type
  }
  return typeOf[agent]
}

// The decision of the guard that stays up; when it did not answer within ASK_MS, or not as the
// guard this mod started, it is ended and the call judged by guard.sh run once as the hook would
// run it (told that no guard stays up).
async function decision($: EngineInterface, env: Record<string, string>, up: Guard, e: ToolCallEnvelope): Promise<GuardDecision | null> {
  const body = JSON.stringify(await hookInput($, env, e))
  const waited = new AbortController()
  try {
    const asked = $.http.fetch('http://guard/decide', { method: 'POST', socketPath: up.socket, body, headers: { 'content-type': 'application/json' } })
    const late = $.clock.sleep(ASK_MS, { signal: waited.signal }).then(
      () => undefined,
      () => undefined,
    )
    const got = await Promise.race([asked, late])
    const answer = got?.ok ? (JSON.parse(got.text) as GuardAnswer) : undefined
    if (answer !== undefined && answer.nonce === up.nonce && answer.decision !== undefined) return answer.decision
  } catch {
    // no answer: guard.sh below
  } finally {
    waited.abort()
  }
  await stop($, up) // hung, gone, or not the guard this mod started
  const once = await $.process.run(['sh', `${env.CLAUDE_PLUGIN_ROOT}/hooks/guard.sh`], {
    env: { ...env, AETHER_MOD_GUARD: '' },
    stdin: body,
    timeoutMs: ASK_MS,
  })
  if (once.exitCode !== 0) throw new Error(`guard.sh exited ${once.exitCode}`)
  if (!once.stdout.trim()) return null
  const said = JSON.parse(once.stdout) as { hookSpecificOutput?: GuardDecision }
  return said.hookSpecificOutput?.permissionDecision ? said.hookSpecificOutput : null
}

/** classic.PreToolUse: the guard's decision joined with the settings hooks' beneath (guard.sh among
 *  them, stepping aside): a deny from either stands, then an ask, then an allow. With no guard
 *  that stays up (it would not start), or under the markdown runtime (AETHER_RUNTIME), guard.sh
 *  beneath judges the call as a hook. */
export async function guardHook($: EngineInterface, e: ToolCallEnvelope, next: Next<'classic.PreToolUse'>): Promise<PreToolUseResult> {
  if (!GUARDED.has(e.tool)) return next(e)
  const started = await $.clock.now().catch(() => undefined)
  try {
    return await judged($, e, next)
  } finally {
    const ended = started === undefined ? undefined : await $.clock.now().catch(() => undefined)
    if (callers[e.tool_use_id] !== undefined && started !== undefined && ended !== undefined) hookMs[e.tool_use_id] = ended - started // the timeline's hook time
  }
}

async function judged($: EngineInterface, e: ToolCallEnvelope, next: Next<'classic.PreToolUse'>): Promise<PreToolUseResult> {
  markdownAsked ??= MARKDOWN.includes(((await $.env.get('AETHER_RUNTIME')) ?? '').toLowerCase())
  if (markdownAsked) return next(e)
  const env = await envOf($).catch(() => undefined)
  const up = env ? await guardUp($, env) : undefined
  if (!env || !up) return next(e)
  const ours = await decision($, env, up, e)
  const below = await next(e)
  const kept = { ...(below.updatedInput ? { updatedInput: below.updatedInput } : {}), ...(below.additionalContext ? { additionalContext: below.additionalContext } : {}) }
  if (ours?.permissionDecision === 'deny') return { ...kept, deny: ours.permissionDecisionReason ?? 'Refused by the Aether guard.' }
  if (below.deny !== undefined || below.ask !== undefined) return below
  if (ours?.permissionDecision === 'ask') return { ...kept, ask: ours.permissionDecisionReason ?? 'The Aether guard asks.' }
  if (ours?.permissionDecision === 'allow') return { ...kept, allow: true }
  return below
}

/** A call the guard could not judge is refused, as guard.sh's `onFailure: block` refuses it. */
export function guardFailed(e: ToolCallEnvelope): PreToolUseResult | undefined {
  return GUARDED.has(e.tool) ? { deny: GUARD_FAILED } : undefined
}
