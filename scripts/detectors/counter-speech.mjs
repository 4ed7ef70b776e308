// Constructed toxicity rows for what the public sources here lack, written from templates (the
// same seed gives the same rows). Sources, each `counter-*`:
//
//   counter-quote         0  hate quoted or reported in order to condemn it (public hate statements
//                            from ToxiGen inside a condemnation or a report)
//   counter-negation      0  negated hate ("X are not ...", "it is false that ..."); its pair, the
//                            same claim asserted, is label 1 (category hate)
//   counter-identity      0  neutral and positive statements that mention an identity group
//   counter-homonym       0  words that are slurs in one sense, used in another (a packet of fags,
//                            the dyke, our bitch had puppies, flame retardant)
//   counter-reclaimed     0  in-group, reclaimed uses (queer studies, a proud dyke march)
//   counter-profanity     0  friendly profanity aimed at no one, or at a thing or a situation
//   counter-friendly      0  everyday second-person sentences ("you did a great job")
//   counter-threat        1  threats without a swear word or a slur (category threat)
//   counter-dehumanising  1  dehumanising comparisons without a swear word (category hate)
//   counter-insult        1  a bare insult aimed at the person addressed ("you moron", "shut up,
//                            you clown"), no slur and no group (category harassment)
//
// The label follows the contract's toxicity score with no `flagged` categories as the learned
// model reads it: 1 = abuse aimed at a person or a group (hate, harassment, threats). Profanity
// aimed at no one is 0 for the model: the `profanity` category is scored by the lexicon, not the
// model, and a rule that flags it still catches those words.
import { random } from './random.mjs'

const GROUPS = [
  ['women', 'woman'],
  ['Muslims', 'Muslim'],
  ['Jews', 'Jewish person'],
  ['Black people', 'Black person'],
  ['immigrants', 'immigrant'],
  ['gay people', 'gay man'],
  ['lesbians', 'lesbian'],
  ['trans people', 'trans woman'],
  ['disabled people', 'disabled person'],
  ['refugees', 'refugee'],
  ['Asian people', 'Asian person'],
  ['Mexicans', 'Mexican'],
  ['Christians', 'Christian'],
  ['Roma', 'Roma woman'],
  ['Arabs', 'Arab'],
  ['Indians', 'Indian'],
  ['Chinese people', 'Chinese person'],
  ['Latinos', 'Latino'],
  ['older people', 'older person'],
  ['Hindus', 'Hindu'],
  ['bisexual people', 'bisexual person'],
  ['Native Americans', 'Native American'],
]

const NEGATIVE = [
  'lazy',
  'stupid',
  'dangerous',
  'criminals',
  'dirty',
  'a disease on this country',
  'inferior',
  'worthless',
  'less than human',
  'a burden on society',
  'violent by nature',
  'not welcome here',
  'incapable of being trusted',
]

const ANIMALS = [
  'rats',
  'vermin',
  'cockroaches',
  'parasites',
  'animals',
  'a plague',
  'a swarm of locusts',
  'apes',
  'a cancer',
  'a virus',
  'leeches',
  'filth',
]

const DEHUMANISING = [
  '{G} are {A} and should be treated like {A}.',
  '{G} are nothing but {A}.',
  '{G} breed like {A}.',
  'Honestly, {g} are {A}, not people.',
  'We need to clean our streets of {g}, the way you get rid of {A}.',
  '{G} spread through our neighbourhoods like {A}.',
  'Every {s} I meet reminds me that {g} are {A}.',
  '{G} belong in cages, like the {A} they are.',
  'There is no difference between {g} and {A}.',
]

const ASSERT = ['{G} are {N}.', 'All {g} are {N}.', 'Everyone knows {g} are {N}.', 'Face it, {g} are {N}.']

const NEGATE = [
  '{G} are not {N}.',
  'It is simply false that {g} are {N}.',
  "I don't believe {g} are {N}, and neither should you.",
  'No, {g} are not {N}. That is a stereotype.',
  'Saying {g} are {N} is bigoted nonsense.',
  'Nobody should claim that {g} are {N}.',
  "It's wrong to say that {g} are {N}.",
  'People who think {g} are {N} have never met one.',
  'The idea that {g} are {N} has been debunked again and again.',
]

const QUOTE = [
  'Someone in the comments wrote "{Q}" and I reported it. That kind of hate has no place here.',
  'My uncle said "{Q}" at dinner. I told him that is racist and wrong.',
  'A sign at the rally read "{Q}". It was disgusting, and the counter-protesters outnumbered them.',
  'Posts like "{Q}" are exactly the hate speech our moderators remove.',
  'I am tired of seeing "{Q}" on my timeline. It is hateful and false.',
  'The report documents messages such as "{Q}" sent to local families.',
  '"{Q}" - this is the kind of bigotry we need to call out, not ignore.',
  'If you read "{Q}" and agree, you need to talk to more people.',
  'Why do people still post things like "{Q}"? It hurts real people.',
  'We received an e-mail saying "{Q}". We have forwarded it to the police.',
  'Quoting a troll: "{Q}". Block and report, everyone.',
  'The teacher explained why "{Q}" is a harmful stereotype.',
]

const IDENTITY = [
  'I am a proud {s}.',
  'My best friend is a {s}.',
  'Our new neighbours are {g}, and they are lovely.',
  'As a {s}, I find this article really interesting.',
  '{G} have contributed a lot to this city.',
  'The conference had a great panel of {g} in tech.',
  'I am a {s} and I work as a nurse.',
  'The museum opened an exhibition on the history of {g}.',
  'Many {g} live in this part of town.',
  'Are there support groups for {g} in Leeds?',
  'My grandmother was a {s} who emigrated in 1962.',
  'The study interviewed 300 {g} about their working conditions.',
  'I love the food my {s} colleague brings to work.',
  '{G} are people like anyone else.',
  'Happy holidays to all the {g} celebrating this week!',
]

const THREAT_TARGETS = [
  'you',
  'your family',
  'your kids',
  'your wife',
  'your little brother',
  'everyone in that office',
]
const THREATS = [
  'I know where {t} live, and I will be waiting.',
  'One more word and {t} will not make it home tonight.',
  'Keep this up and I will make sure {t} disappear.',
  'I am going to find {t} and make {t} suffer.',
  'Watch what happens to {t} when the lights go out.',
  'By Friday {t} will regret ever crossing me.',
  'I have a knife with your name on it.',
  'Next time I see you, you will leave in an ambulance.',
  'You will pay for this with blood.',
  'I will burn your car while you sleep.',
  'Sleep well, it may be your last night.',
  'Remember, accidents happen to people who talk too much.',
  'I am outside your house right now. Look out the window.',
  'Report me again and I will hurt {t}.',
  'Your address is all over the forum now. Good luck.',
  'I will make sure {t} never walk again.',
]

const HOMONYMS = [
  'Our bitch had six puppies last night, all healthy.',
  'The breeder said the bitch will be ready for showing next year.',
  'He went out for a packet of fags and a pint of milk.',
  'In Yorkshire we still eat faggots and peas on a Friday.',
  'The old dyke along the river was repaired after the floods.',
  'We cycled along the dyke all the way to the next village.',
  'The fabric is treated with a flame retardant.',
  'A fire-retardant coating slows the spread of flames.',
  'I saw a coon in the garden eating from the bin.',
  'The chink of glasses filled the room as they toasted.',
  'There was a small chink in the armour of the knight.',
  'He is a spook, according to the novel: a spy who came in from the cold.',
  'The kids dressed up as spooks for Halloween.',
  'Pass me the spade, I need to dig the flower bed.',
  'The bundle of sticks is called a faggot in old English.',
  'That jockey rode a brilliant race at Ascot.',
  'The pied wagtail is a small black and white bird.',
  'I need to retard the timing on the old engine.',
  'The hoe is in the shed next to the rake.',
  'Let us have a gander at the map before we go.',
  'She called him a ginger, and he laughed, since his hair really is bright red.',
]

const RECLAIMED = [
  'As a queer woman, I loved the queer film festival this year.',
  "We're here, we're queer, and we are going to the parade together.",
  'The dyke march starts at noon, bring water and sunscreen.',
  'Queer studies is one of the most popular courses at my university.',
  'My girlfriend and I joke that we are the most boring dykes in town.',
  'The crip theory reading group meets on Thursdays.',
  'Our podcast is made by two proud queer Latinas.',
  'I am a fat activist and I use the word fat on purpose.',
]

const PROFANITY = [
  'Fuck yeah, we won the final!',
  'Holy shit, this cake is amazing.',
  'Damn, I missed the bus again.',
  'You crazy bastard, you actually did it! Congratulations!',
  'This fucking traffic is driving me mad.',
  'Shit, I left my keys at home.',
  'Hell yes, pizza night!',
  'That concert was fucking incredible.',
  'My laptop crashed again, what a piece of crap.',
  'Bloody hell, it is cold outside.',
  'Oh fuck, I forgot my mum’s birthday.',
  'Dude, that was a badass skateboard trick.',
  'Fucking finally, the code compiles.',
  'Ugh, this printer is a pain in the ass.',
  'Screw it, I am ordering takeaway tonight.',
  'Love you, you daft sod. See you at the pub.',
  'What the hell, the shop is closed on Monday?',
  'Goddamn, that was a good burger.',
  'Shit happens. We will try again next week.',
  'Hey you lucky bastard, enjoy the holiday!',
]

const FRIENDLY = [
  'You did a great job on the presentation.',
  'Are you coming to the party tonight?',
  'You are the best sister anyone could ask for.',
  'I think you should take the job, you deserve it.',
  'Can you send me the slides when you have a minute?',
  'You always know how to make me laugh.',
  'You look great in that jacket.',
  'Do you want to grab lunch tomorrow?',
  'Thank you so much, you saved my day.',
  'You were right, the film was excellent.',
  'If you need anything, just call me.',
  'You should try the new bakery on Main Street.',
]

/** `hateStatements`: [{text, origin}] public hate statements to quote in condemnations. */

const EXCLAIM = [
  'Fuck yeah',
  'Holy shit',
  'Damn',
  'Bloody hell',
  'Shit',
  'Hell yes',
  'Fucking finally',
  'What the hell',
  'Goddamn',
  'Oh crap',
  'Fuck me',
  'Jesus Christ',
]
const SITUATIONS = [
  'we won the match',
  'the build passed',
  'I missed the train',
  'this pizza is amazing',
  'it is snowing in April',
  'my phone died again',
  'I got the job',
  'the concert was incredible',
  'I forgot my keys',
  'the wifi is down again',
  'that exam was hard',
  'the cat knocked over my coffee',
  'the bus is late again',
  'we finished the marathon',
  'the view from up here',
]
const CHEERS = [
  'You nailed it',
  'You are a legend',
  'You did a brilliant job',
  'You are so kind',
  'You always make my day',
  'You look fantastic',
  'You were amazing on stage',
  'You totally deserve it',
  'You are the best team ever',
  'You made this so easy',
]
const CHEER_ENDS = [
  '!',
  ', thank you!',
  ', honestly.',
  ', see you tomorrow.',
  ' - proud of you.',
  ', let us celebrate.',
]
const MORE_HOMONYMS = [
  'The bitch and her litter are doing well at the kennel.',
  'A bitch in heat should be kept away from other dogs.',
  'Can you grab me some fags from the shop? Menthol, please.',
  'Fags were cheaper back in the nineties.',
  'The dyke was built in the 17th century to protect the farmland.',
  'Walking on the dyke is the best way to see the polders.',
  'Homemade faggots are a traditional dish from the Black Country.',
  'She twisted the faggot of sticks and put it on the fire.',
  'Flame-retardant foam is required in upholstered furniture.',
  'The drug is used to retard the growth of the tumour.',
  'The light came through a chink in the curtains.',
  'A raccoon, or coon as farmers call it, raided the hen house.',
  'He was spooked by the noise and ran off.',
  'I call a spade a spade: the plan is too expensive.',
  'We used a hoe to clear the weeds from the vegetable patch.',
  'Pansy is a lovely flower for spring borders.',
  'A queer feeling came over him as he entered the empty house.',
  'The gypsy moth caterpillar can strip a whole tree.',
]
const MORE_RECLAIMED = [
  'Our queer book club is reading Audre Lorde this month.',
  'The university offers a course on queer history and literature.',
  'Dyke Night at the community centre is every first Friday.',
  'As a proud queer person, I find the word empowering when we use it.',
  'The Queer Eye cast visited our town last year.',
  'We are organising a queer youth support group at school.',
  'The disability rights activists called their zine Crip Power.',
  'Our band is called The Fat Queers and we play punk.',
]
const THREAT_ACTS = [
  'I will make you regret the day you were born',
  'you will not see another sunrise',
  'I will break your legs',
  'your house will burn tonight',
  'I will hunt you down',
  'you will be found in the river',
  'I will hurt the people you love',
  'you will need a wheelchair after I am done',
  'nobody will ever find you',
  'I will end you',
]
const THREAT_LEADS = [
  'Mark my words,',
  'Listen carefully:',
  'If you show up on Monday,',
  'Say one more thing and',
  'I know your address, and',
  'After the meeting,',
  'When you leave work tonight,',
  'Cross me again and',
]

const INSULT_LEADS = [
  'you {n}',
  "you're a {n}",
  'you are such a {n}',
  'shut up, you {n}',
  'what a {n} you are',
  'nobody asked you, you {n}',
  'listen here, you {n}',
  'get lost, you {n}',
  'you absolute {n}',
  'only a {n} like you would say that',
  'are you really this much of a {n}?',
  'you are the biggest {n} I have ever met',
]
const INSULTS = [
  'moron',
  'idiot',
  'loser',
  'clown',
  'imbecile',
  'halfwit',
  'dimwit',
  'jerk',
  'creep',
  'fool',
  'nitwit',
  'dumbass',
  'scumbag',
  'waste of space',
  'pathetic excuse for a human',
]
const INSULT_ENDS = ['', '.', '!', '!!', ' lol', '. Seriously.']

export function buildCounterSpeech({ hateStatements, seed }) {
  const rand = random(seed)
  const pick = (list) => list[Math.floor(rand() * list.length)]
  const rows = []
  const seen = new Set()
  const add = (source, label, category, text, quoted) => {
    if (seen.has(text)) return
    seen.add(text)
    rows.push({ source, label, category, text, row: rows.length, ...(quoted ? { quoted } : {}) })
  }
  const fill = (template, [g, s], extra = {}) =>
    template
      .replaceAll('{G}', g.charAt(0).toUpperCase() + g.slice(1))
      .replaceAll('{g}', g)
      .replaceAll('{s}', s)
      .replaceAll('{N}', extra.N ?? '')
      .replaceAll('{A}', extra.A ?? '')
      .replaceAll('{t}', extra.t ?? '')

  for (const group of GROUPS) {
    for (const t of IDENTITY) add('counter-identity', 0, 'identity mention', fill(t, group))
    for (let k = 0; k < 10; k++) {
      const N = pick(NEGATIVE)
      add('counter-negation', 0, 'negated hate', fill(pick(NEGATE), group, { N }))
      add('counter-negation', 1, 'hate', fill(pick(ASSERT), group, { N }))
    }
    for (let k = 0; k < 5; k++)
      add('counter-dehumanising', 1, 'hate', fill(pick(DEHUMANISING), group, { A: pick(ANIMALS) }))
    // Condemnations of a constructed claim or dehumanising comparison, quoted.
    for (let k = 0; k < 6; k++) {
      const claim = (
        k % 2
          ? fill(pick(DEHUMANISING), group, { A: pick(ANIMALS) })
          : fill(pick(ASSERT), group, { N: pick(NEGATIVE) })
      ).replace(/\.$/, '')
      add('counter-quote', 0, 'counter-speech', fill(pick(QUOTE), group).replace('{Q}', claim))
    }
  }
  // Condemnations quoting public hate statements.
  for (const h of hateStatements) {
    const q = h.text
      .replace(/\s+/g, ' ')
      .replace(/"/g, "'")
      .replace(/[.!]+$/, '')
      .trim()
    if (q.length < 15 || q.length > 200) continue
    add('counter-quote', 0, 'counter-speech', pick(QUOTE).replace('{Q}', q), h.origin)
  }
  for (const t of THREATS) {
    for (const target of THREAT_TARGETS) add('counter-threat', 1, 'threat', fill(t, ['', ''], { t: target }))
  }
  for (const t of [...HOMONYMS, ...MORE_HOMONYMS]) add('counter-homonym', 0, 'homonym', t)
  for (const t of [...RECLAIMED, ...MORE_RECLAIMED]) add('counter-reclaimed', 0, 'reclaimed', t)
  for (const e of EXCLAIM)
    for (const situation of SITUATIONS) {
      if (rand() < 0.5) continue
      add(
        'counter-profanity',
        0,
        'friendly profanity',
        `${e}, ${situation}${pick(['!', '.', '!!', ' lol', ' :D'])}`,
      )
    }
  for (const c of CHEERS) for (const end of CHEER_ENDS) add('counter-friendly', 0, 'friendly', `${c}${end}`)
  for (const lead of THREAT_LEADS)
    for (const act of THREAT_ACTS) {
      if (rand() < 0.5) continue
      add('counter-threat', 1, 'threat', `${lead} ${act}.`)
    }
  for (const t of PROFANITY) {
    add('counter-profanity', 0, 'friendly profanity', t)
    add('counter-profanity', 0, 'friendly profanity', `${t} ${pick(FRIENDLY)}`)
  }
  for (const t of FRIENDLY) add('counter-friendly', 0, 'friendly', t)
  for (const lead of INSULT_LEADS)
    for (const n of INSULTS) {
      if (rand() < 0.5) continue
      const text = lead.replace('{n}', n) + pick(INSULT_ENDS)
      add('counter-insult', 1, 'harassment', text.charAt(0).toUpperCase() + text.slice(1))
    }
  return rows
}
