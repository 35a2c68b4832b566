module.exports = {
  displayName: 'chain-bsv',
  preset: '../../../jest.preset.js',
  rootDir: __dirname,
};
