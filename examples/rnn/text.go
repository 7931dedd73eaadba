package main

// corpus is the built-in training text (written for bulkad; free to use).
const corpus = `the river ran past the mill and the mill ran on the river. every morning the miller
opened the gate and the water turned the wheel, and the wheel turned the stone, and the stone
ground the grain into flour. the flour went to the baker in the town, and the baker made bread
for the people who lived along the river. when the rain came the river rose and the wheel ran
fast; when the sun came the river fell and the wheel ran slow. the miller did not mind. he said
that a mill is like a heart: it beats fast or it beats slow, but it must not stop. the children
of the town came to watch the wheel. they threw leaves into the water and ran along the bank to
see them go under the wheel and come out on the other side. the miller told them the names of
the birds on the river and the fish under the water. in the winter the river froze at the edges
and the wheel wore a coat of ice. then the miller lit a fire in the mill and sat by the stone and
listened to the water under the ice. in the spring the ice broke and the river ran high and
brown, full of branches from the hills. the miller cleared the gate with a long pole and sang to
the river so that it would be kind to the mill. the river was kind, most years. one year it was
not, and the water came into the mill and over the stone. the people of the town came with
buckets and bags of sand, and the baker came with bread, and together they kept the river out.
when the water fell the miller dried the stone and turned the wheel by hand until it ran again.
the children said the mill had a heart after all, and the miller said that the heart was the
town.`
