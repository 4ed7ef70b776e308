/** Every guard format by name. */
import type { GuardFormat, GuardFormatName } from './format.js'
import { graniteGuardian } from './granite-guardian.js'
import { llamaGuard } from './llama-guard.js'
import { openaiModeration } from './openai-moderation.js'
import { qwen3guard } from './qwen3guard.js'
import { shieldgemma } from './shieldgemma.js'
import { textClassification } from './text-classification.js'

export const FORMATS: Readonly<Record<GuardFormatName, GuardFormat>> = {
  'llama-guard': llamaGuard,
  'granite-guardian': graniteGuardian,
  shieldgemma,
  qwen3guard,
  'openai-moderation': openaiModeration,
  'text-classification': textClassification,
}

export {
  GUARD_FORMATS,
  type GuardCall,
  type GuardFormat,
  type GuardFormatName,
  type GuardFormatOptions,
} from './format.js'
