// What the mod (hooks/mod.ts) and the helper pass each other through `aether mod …` (docs/contracts.md,
// "The mod's calls"): the helper's answers the mod reads, and the payloads it hands in. Each
// interface's fields are the field list of the same name in scripts/aether/colony/mod.py (SHAPES);
// tests/test_mod_types.py holds the two together, so keep one field per line. Claude Code's own
// shapes come from its declarations ('claude-code').
import type { AgentStatus, SessionRateLimit, TurnCompleteReason, TurnUsage } from 'claude-code'

// ---------------------------------------------------------------- the helper's answers

/** `mod serve`: the helper's text is the command's output. */
export interface ServedText {
  serve: 'text'
  text: string
  exit_code: number
}

/** `mod serve`: the markdown command and the model serve it. */
export interface ServedModel {
  serve: 'model'
  why: string
}

/** `mod serve`: the mod's loop serves it, from this action. */
export interface ServedLoop {
  serve: 'loop'
  runtime: string
  action: Action
  spool: string
}

export type Served = ServedText | ServedModel | ServedLoop

/** One ant to start, its whole brief in `prompt`. */
export interface Spawn {
  id: string
  ref: string
  subagent_type: string
  description: string
  prompt: string
  model?: string
}

/** What to show should the person interrupt the loop at an action (said in advance). */
export interface Interrupt {
  text: string
  exit_code: number
}

export interface SpawnAction {
  action: 'spawn'
  line: string | null
  progress: string
  warning: string | null
  run?: string | null
  spawns: Spawn[]
  interrupt: Interrupt
  again: string | null
}

export interface WaitAction {
  action: 'wait'
  line: string | null
  progress: string
  warning: string | null
  run?: string | null
  refs: string[]
  agents?: Record<string, string | null>
  stop?: string[]
  interrupt: Interrupt
  again: string | null
}

/** `done`, `ask` or `stop`: the command ends with its text and exit status. */
export interface EndAction {
  action: 'done' | 'ask' | 'stop'
  line: string | null
  progress: string
  warning: string | null
  text: string
  exit_code: number
}

/** `mod serve`'s first action, and each `mod wait`'s answer. */
export type Action = SpawnAction | WaitAction | EndAction

/** `mod launched`'s answer. */
export interface Launched {
  launched: string[]
  refused: string[]
  lines: string[]
  progress: string
}

/** `mod answer`'s answer. */
export interface Answered {
  ref: string
  line: string | null
  already_recorded: boolean | null
  waiting: string[]
}

// ---------------------------------------------------------------- what the mod hands in

/** `mod serve`'s payload. */
export interface ServeInput {
  command: string
  args: string
}

/** One spawn the mod sent: an agent id when it runs, a why when Claude Code refused it. */
export interface Launch {
  ref: string
  agent_id?: string
  why?: string
}

/** `mod launched`'s payload. */
export interface LaunchedInput {
  spawns: Launch[]
  call: string
}

/** The parts of a tool call's input kept as evidence. */
export interface CallInput {
  command: unknown
  file_path: unknown
  notebook_path: unknown
  run_in_background: unknown
}

/** A tool call of one of the mod's ants (`tool.call`), kept as evidence. */
export interface Call {
  id: string | undefined
  tool: string
  input: CallInput
  refused: boolean
  isError: boolean
  text: string
  ms: number
  t: number
  hooks_ms?: number
}

/** `mod answer`'s payload: what `turn.complete` brought. */
export interface AnswerInput {
  ref: string | undefined
  agent_id: string
  text: string
  usage: TurnUsage | Record<string, never>
  duration_ms: number
  reason: TurnCompleteReason
  calls: Call[]
  error?: string
  rate_limits?: SessionRateLimit[]
  status?: AgentStatus | null
}

/** What one TaskStop of an ant past its deadline did. */
export interface Stopped {
  agent_id: string
  ok: boolean
  text: string
}

/** `mod wait`'s payload. */
export interface WaitInput {
  refs: string[]
  scope: string | null | undefined
  seconds?: number
  statuses?: Record<string, AgentStatus | null>
  calls: Record<string, Call[]>
  stopped?: Stopped[]
  call: string
}

// ---------------------------------------------------------------- the guard that stays up (hooks/guard_serve.py)

/** The first line `guard.sh --serve` prints: where it listens, and its process. */
export interface GuardStarted {
  socket: string
  pid: number
}

/** A decision of the guard, as guard.sh's `hookSpecificOutput` carries it. */
export interface GuardDecision {
  permissionDecision: 'allow' | 'deny' | 'ask'
  permissionDecisionReason?: string
}

/** `POST /decide`: the decision on one call, or null (Claude Code decides as usual); `nonce`: the
 *  token the mod handed the guard on its stdin. */
export interface GuardAnswer {
  decision: GuardDecision | null
  nonce: string
}
